//! CBS's own wire facts (tencentcloud-sdk-python-cbs 3.1.175 `models.py`).

/// The CBS operations gpuctl uses.
pub const CBS_ACTIONS: &[&str] = &[
    "CreateSnapshot",
    "DescribeSnapshots",
    "DeleteSnapshots",
    "DescribeDisks",
    "CreateAutoSnapshotPolicy",
    "BindAutoSnapshotPolicy",
    // issue 15: a leftover disk's return.
    "TerminateDisks",
];
