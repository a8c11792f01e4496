//! gpuctl-sim (skeleton; see ARCHITECTURE.md)
