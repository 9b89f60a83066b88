//! The Go types of kpt's Kptfile v1 (`pkg/api/kptfile/v1/types.go` at kpt
//! v1.0.0-beta.56) as a decoding schema. Inlined Go structs (`ResourceMeta`,
//! `TypeMeta`, `NameMeta`) are flattened into their parents, as go-yaml does.

use super::decode::{StructTy, Ty};

const STR: Ty = Ty::Str("string");
const STR_LIST: Ty = Ty::List(&STR);

/// kyaml's `yaml.ObjectMeta`.
pub static OBJECT_META: StructTy = StructTy {
    go_name: "yaml.ObjectMeta",
    fields: &[
        ("name", STR),
        ("namespace", STR),
        ("labels", Ty::StrMap),
        ("annotations", Ty::StrMap),
    ],
};

static GIT: StructTy = StructTy {
    go_name: "v1.Git",
    fields: &[("repo", STR), ("directory", STR), ("ref", STR)],
};

static UPSTREAM: StructTy = StructTy {
    go_name: "v1.Upstream",
    fields: &[
        ("type", Ty::Str("v1.OriginType")),
        ("git", Ty::Struct(&GIT)),
        ("updateStrategy", Ty::Str("v1.UpdateStrategyType")),
    ],
};

static GIT_LOCK: StructTy = StructTy {
    go_name: "v1.GitLock",
    fields: &[
        ("repo", STR),
        ("directory", STR),
        ("ref", STR),
        ("commit", STR),
    ],
};

static UPSTREAM_LOCK: StructTy = StructTy {
    go_name: "v1.UpstreamLock",
    fields: &[
        ("type", Ty::Str("v1.OriginType")),
        ("git", Ty::Struct(&GIT_LOCK)),
    ],
};

static READINESS_GATE: StructTy = StructTy {
    go_name: "v1.ReadinessGate",
    fields: &[("conditionType", STR)],
};

static PACKAGE_INFO: StructTy = StructTy {
    go_name: "v1.PackageInfo",
    fields: &[
        ("site", STR),
        ("emails", STR_LIST),
        ("license", STR),
        ("licenseFile", STR),
        ("description", STR),
        ("keywords", STR_LIST),
        ("man", STR),
        ("readinessGates", Ty::List(&Ty::Struct(&READINESS_GATE))),
    ],
};

static SELECTOR: StructTy = StructTy {
    go_name: "v1.Selector",
    fields: &[
        ("apiVersion", STR),
        ("kind", STR),
        ("name", STR),
        ("namespace", STR),
        ("labels", Ty::StrMap),
        ("annotations", Ty::StrMap),
    ],
};

/// kpt's `v1.Function`.
pub static FUNCTION: StructTy = StructTy {
    go_name: "v1.Function",
    fields: &[
        ("image", STR),
        ("exec", STR),
        ("configPath", STR),
        ("configMap", Ty::StrMap),
        ("name", STR),
        ("selectors", Ty::List(&Ty::Struct(&SELECTOR))),
        ("exclude", Ty::List(&Ty::Struct(&SELECTOR))),
    ],
};

static PIPELINE: StructTy = StructTy {
    go_name: "v1.Pipeline",
    fields: &[
        ("mutators", Ty::List(&Ty::Struct(&FUNCTION))),
        ("validators", Ty::List(&Ty::Struct(&FUNCTION))),
    ],
};

static INVENTORY: StructTy = StructTy {
    go_name: "v1.Inventory",
    fields: &[
        ("namespace", STR),
        ("name", STR),
        ("inventoryID", STR),
        ("labels", Ty::StrMap),
        ("annotations", Ty::StrMap),
    ],
};

static CONDITION: StructTy = StructTy {
    go_name: "v1.Condition",
    fields: &[
        ("type", STR),
        ("status", Ty::Str("v1.ConditionStatus")),
        ("reason", STR),
        ("message", STR),
    ],
};

static STATUS: StructTy = StructTy {
    go_name: "v1.Status",
    fields: &[("conditions", Ty::List(&Ty::Struct(&CONDITION)))],
};

/// kpt's `v1.KptFile`.
pub static KPTFILE: StructTy = StructTy {
    go_name: "v1.KptFile",
    fields: &[
        ("apiVersion", STR),
        ("kind", STR),
        ("metadata", Ty::Struct(&OBJECT_META)),
        ("upstream", Ty::Struct(&UPSTREAM)),
        ("upstreamLock", Ty::Struct(&UPSTREAM_LOCK)),
        ("info", Ty::Struct(&PACKAGE_INFO)),
        ("pipeline", Ty::Struct(&PIPELINE)),
        ("inventory", Ty::Struct(&INVENTORY)),
        ("status", Ty::Struct(&STATUS)),
    ],
};
