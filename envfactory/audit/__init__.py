"""Measured meaning: audits of what the factory makes (seeded environments, written datasets).

``envfactory audit ENV_OR_DOMAIN`` checks seeded and post-call state against field roles and
cross-field constraints; ``envfactory audit DATASET`` measures a written trajectory dataset.
"""

from .dataset import DatasetAudit, audit_dataset, audit_table, is_dataset_dir
from .seed import (
    CHECKS,
    AuditCheck,
    SeedAuditReport,
    audit_environment,
    audit_rows,
    is_lorem_word,
    looks_like_person,
)

# ``audit_rows`` is the seed audit of rows; the dataset audit of rows is ``audit.dataset.audit_rows``.
__all__ = [
    "CHECKS",
    "AuditCheck",
    "DatasetAudit",
    "SeedAuditReport",
    "audit_dataset",
    "audit_environment",
    "audit_rows",
    "audit_table",
    "is_dataset_dir",
    "is_lorem_word",
    "looks_like_person",
]
