//! Data-like cases: a functionConfig and input items, and the items the
//! function writes (before kpt restores comments and field order).

use super::*;
