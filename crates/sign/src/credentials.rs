//! Loading credentials (I/O): see `load`. Filled in below.
