//! Unit tests of the Tencent emulator (filled in by the next commit).
