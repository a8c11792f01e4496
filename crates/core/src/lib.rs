//! gpuctl-core (skeleton; see ARCHITECTURE.md)
