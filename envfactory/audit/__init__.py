"""Measured meaning: audits of what the factory makes (seeded environments, written datasets).

``envfactory audit ENV_OR_DOMAIN`` checks seeded and post-call state against field roles and
cross-field constraints; ``envfactory audit DATASET`` measures a written trajectory dataset.
"""

from .dataset import DatasetAudit, audit_dataset, audit_rows, audit_table, is_dataset_dir

__all__ = ["DatasetAudit", "audit_dataset", "audit_rows", "audit_table", "is_dataset_dir"]
