"""Node agent: DRA plugin registration, ResourceSlice publishing, prepare/unprepare, checkpoint."""
