//! Which notifications of a task were delivered (`notify_argv`), kept in its checkpoint so a
//! notification goes out once per checkpoint whichever process or machine ticks next.

use serde::Deserialize;
use serde::Serialize;

/// The notification log of one task.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoticeLog {
    /// The keys delivered (or given up on), newest last, bounded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sent: Vec<String>,
    /// The notification that failed and will be tried again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failing: Option<FailingNotice>,
}

/// A notification whose command failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailingNotice {
    /// Its key.
    pub key: String,
    /// How many times it ran and failed.
    pub attempts: u32,
    /// The last failure, bounded.
    pub error: String,
}

impl NoticeLog {
    /// Reports whether nothing was ever notified (what the checkpoint leaves out).
    pub fn is_empty(&self) -> bool {
        self.sent.is_empty() && self.failing.is_none()
    }
}
