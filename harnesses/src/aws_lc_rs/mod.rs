//! aws_lc_rs harnesses (being written).
