//! The dashboard model: what `GET /api/dashboard` and the page answers return, and what the
//! web page renders.
//!
//! Every type here is plain data (serde, camelCase JSON), derived by the derive stage from
//! the coordination records and a clock. The server computes it; the browser renders it;
//! both link this crate, so they agree by construction. The model uses nothing else of the
//! dashboard: every other stage speaks its types. Each file holds one part of the model and
//! is re-exported here by name, so a type is `model::Row` wherever it is defined.

mod annotation;
mod attention;
mod batches;
mod dashboard;
mod detail;
mod events;
mod github;
mod health;
mod lane_timeline;
mod machines;
mod past;
mod rows;
mod slice;
mod spend;
mod task_panel;
#[cfg(test)]
mod tests;
mod transcript;
mod writes;

pub use annotation::hidden;
pub use annotation::next_expiry;
pub use annotation::Annotation;
pub use annotation::AnnotationKind;
pub use attention::Attention;
pub use attention::AttentionKind;
pub use batches::AuditCounts;
pub use batches::BatchDetail;
pub use batches::BatchSource;
pub use batches::BatchTier;
pub use batches::BatchView;
pub use batches::ControlStatus;
pub use batches::LaneView;
pub use batches::QaCounts;
pub use batches::Repair;
pub use dashboard::Counts;
pub use dashboard::DashboardModel;
pub use dashboard::RECENT_EVENTS;
pub use dashboard::SETUP_NOTICE;
pub use detail::item_not_found;
pub use detail::ItemDetail;
pub use detail::TimelineEntry;
pub use detail::TimelineKind;
pub use events::EventView;
pub use github::CiState;
pub use github::GhState;
pub use github::GhTerminal;
pub use github::GithubView;
pub use github::LinkedPull;
pub use github::SourceState;
pub use github::SourceStatus;
pub use health::HealthCategory;
pub use health::HealthItem;
pub use health::Severity;
pub use health::Signal;
pub use lane_timeline::LaneBar;
pub use lane_timeline::LaneOutcome;
pub use lane_timeline::LaneTimeline;
pub use lane_timeline::TimelineMachine;
pub use lane_timeline::Utilisation;
pub use lane_timeline::TIMELINE_HOURS;
pub use lane_timeline::TIMELINE_MAX_HOURS;
pub use machines::AgentView;
pub use machines::MachineView;
pub use past::PastView;
pub use past::Touch;
pub use past::Touches;
pub use rows::LivenessView;
pub use rows::QaItem;
pub use rows::QaStatus;
pub use rows::Row;
pub use rows::RowState;
pub use rows::Scheduling;
pub use slice::Slice;
pub use spend::SpendRow;
pub use spend::SpendSummary;
pub use spend::SpendView;
pub use spend::SPEND_DAYS;
pub use task_panel::ChecklistRow;
pub use task_panel::CoordinatorPanel;
pub use task_panel::LaneRunView;
pub use task_panel::MergeView;
pub use task_panel::OperatorCommand;
pub use task_panel::PauseView;
pub use transcript::transcript_elsewhere;
pub use transcript::LaneTranscript;
pub use transcript::TranscriptElsewhere;
pub use writes::AnnotationBody;
pub use writes::AnnotationKey;
pub use writes::ErrorAnswer;
pub use writes::ImportBody;
pub use writes::Imported;
pub use writes::LaunchPrompt;
pub use writes::Scalar;
pub use writes::ScopeSource;
pub use writes::SettingsBody;
pub use writes::SettingsView;
pub use writes::StopBody;
pub use writes::StopRequested;
pub use writes::TargetRepos;
