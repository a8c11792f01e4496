//! gpuctl-simkit (skeleton; see ARCHITECTURE.md)
