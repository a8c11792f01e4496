//! The cloud's bill lines (issue 15). Not read yet: the trait's default refuses.

use gpuctl_cloud::services::Bills;

use super::Client;

impl Bills for Client {}
