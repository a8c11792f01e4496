//! gpuctl-sign (skeleton; see ARCHITECTURE.md)
