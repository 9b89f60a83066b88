//! Bad inputs (written next).
