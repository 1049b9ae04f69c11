"""SamplerConfig: the settings of the plan samplers (probabilities, depths, retry limits).

Defaults live here and nowhere else. A config file sets them per command under
``sampler_config`` (``envfactory --config FILE sample``); the CLI also takes them as JSON::

    sample:
      sampler_config: {p_branch: 0.5, max_depth: 4}
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["SamplerConfig"]


class SamplerConfig(BaseModel):
    """How plans are sampled. Probabilities are per plan (or per choice where said)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # -- shape of a topology plan
    max_depth: int = Field(5, ge=1, le=20, description="Longest chain of look-ups that resolves one input.")
    alpha: float = Field(
        1.0, ge=0.0, description="Goal tools are drawn with weight (1 + times used) ** -alpha."
    )
    p_branch: float = Field(
        0.35, ge=0.0, le=1.0, description="Chance of a side look-up on a row an earlier step saw."
    )
    p_second_goal: float = Field(
        0.35, ge=0.0, le=1.0, description="Chance of a second goal in the same plan."
    )
    p_chain: float = Field(
        0.7, ge=0.0, le=1.0, description="Chance that a second goal acts on the first goal's row."
    )
    p_create: float = Field(
        0.2, ge=0.0, le=1.0, description="Chance that a keyed goal acts on a row a setup step creates."
    )
    p_create_parent: float = Field(
        0.1,
        ge=0.0,
        le=1.0,
        description="Chance that a create goal's parent row is created by a setup step too.",
    )
    p_unfiltered_list: float = Field(
        0.1, ge=0.0, le=1.0, description="Share of list goals asked without any filter."
    )
    p_id_filter: float = Field(
        0.35,
        ge=0.0,
        le=1.0,
        description="Chance that a look-up filters on a parent row found by another look-up.",
    )
    max_user_filters: int = Field(2, ge=1, description="Most filters a person states to single out one row.")
    max_update_fields: int = Field(2, ge=1, description="Most optional fields one update goal changes.")
    p_action_option: float = Field(
        0.2, ge=0.0, le=1.0, description="Chance that an action goal sets each optional parameter."
    )
    p_optional_value: float = Field(
        0.4, ge=0.0, le=1.0, description="Chance that a create goal states each optional value."
    )
    p_optional_ref: float = Field(
        0.3, ge=0.0, le=1.0, description="Chance that a create goal links each optional parent row."
    )
    horizon_days: int = Field(
        60, ge=1, description="Made-up dates and times fall within this many days of the clock."
    )
    # -- coherence (tasks): what one person would ask for together
    intent_first: bool = Field(
        False,
        description="Plans a person would ask for together: no side look-ups, "
        "no unrelated second goal, no change to a row the same plan just created or "
        "deletes, and no internal id the user would have to know.",
    )
    # -- retry limits
    goal_tries: int = Field(
        30, ge=1, description="Goals tried before a sample() call gives up (SampleError)."
    )
    create_tries: int = Field(6, ge=1, description="Groundings tried for one create goal.")
    locate_tries: int = Field(
        4, ge=1, description="Look-ups tried to bring one row onto the first result page."
    )
    candidate_draws: int = Field(8, ge=1, description="Rows drawn when picking the row a keyed goal acts on.")
    parent_draws: int = Field(20, ge=1, description="Rows drawn when picking a create goal's parent row.")
    fresh_tries: int = Field(50, ge=1, description="Draws for a value that no row has yet (unique fields).")
    # -- coverage
    window: int = Field(
        1000, ge=0, description="Every satisfiable tool is aimed at once per this many plans (0: off)."
    )
    max_failed_attempts: int = Field(
        3,
        ge=1,
        description="Failed groundings after which the window stops aiming at a tool that never succeeded.",
    )
    # -- random walk baseline
    walk_max_len: int = Field(5, ge=1, description="Longest random walk (steps).")
    # -- caches
    dry_run_cache: int = Field(
        50_000, ge=0, description="Dry-run results kept per environment while planning."
    )
