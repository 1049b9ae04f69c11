"""Measured meaning: audits of what the factory makes (seeded environments, written datasets).

``envfactory audit ENV_OR_DOMAIN`` checks seeded and post-call state against field roles and
cross-field constraints; ``envfactory audit DATASET`` measures a written trajectory dataset.
"""

from .seed import (
           CHECKS,
           AuditCheck,
           SeedAuditReport,
           audit_environment,
           audit_rows,
           is_lorem_word,
           looks_like_person,
)

__all__ = ["CHECKS", "AuditCheck", "SeedAuditReport", "audit_environment", "audit_rows", "is_lorem_word",
           "looks_like_person"]
