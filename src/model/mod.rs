//! The vocabulary every stage speaks: quantities with bounds, devices, loads and reconciled rows.
//! Plain data, no I/O and no parsing; every other stage imports from here.

pub mod actual;
pub mod analysis;
pub mod attempt;
pub mod concluded;
pub mod device;
pub mod estimate;
pub mod finding;
pub mod grid;
pub mod hyperparameters;
pub mod knobs;
pub mod kv_geometry;
pub mod layout;
pub mod lifecycle;
pub mod load;
pub mod max_ctx;
pub mod observed;
pub mod pair;
pub mod placement_trace;
pub mod ps;
pub mod quantity;
pub mod reconciled;
pub mod runtime;
pub mod scheduler;
pub mod serving;
pub mod snapshot;
pub mod timeline;
pub mod views;
pub mod whatif;

pub use actual::{
    Actual, BreakdownRow, Buffer, BufferKind, FailedAllocation, FailedPart, FailureCause, KvCache,
    Recovered, WorkingSet,
};
pub use analysis::{
    Analysis, CutByWrap, InputRole, InputSummary, InputWarning, LineFigure, UnrecognizedLine,
};
pub use attempt::{
    Attempt, AttemptGpu, Eviction, FitProbe, FitProbeDecision, FitProbeDevice, FitProbeTried,
};
pub use concluded::Concluded;
pub use device::{Backend, Device};
pub use estimate::{
    DeviceEstimate, DeviceFree, Estimate, EstimateForm, FitDecision, FitStop, FitStopCause,
    FitSummary, Layers, OffloadShape, WeightsSemantics,
};
pub use finding::{Finding, FindingCode, Severity, Suggestion};
pub use grid::{Cell, Grid, Part};
pub use hyperparameters::{Hyperparameters, PerLayer};
pub use knobs::{Knob, KnobEntry, Reach, Spelling};
pub use layout::{
    architecture_swa_pattern, swa_dense_first, uses_window, KvType, LayerAttention, LayerLayout,
    LayoutSource, ModelLayout,
};
pub use lifecycle::{
    DryRunBuffers, DryRunEvidence, Lifecycle, LifecyclePhase, TableEvidence, TablePhase,
    TableRecord,
};
pub use load::{
    Engine, Gpu, Load, LoadEnd, LoadSource, ModelRef, PartialReason, RejectedGpu, RejectionCause,
    Settings,
};
pub use max_ctx::{MaxContext, MaxContextRow};
pub use observed::{CaptureRef, GpuJoin, ObservedRow};
pub use pair::{
    LoadPair, ModelIdentity, PairFigure, PairVerdict, SettingChange, SuggestionOutcome,
};
pub use placement_trace::{FamilyTry, Margin, PlacementTrace, TraceStage, TraceStep};
pub use ps::{gpu_buffers_of, CardFigure, OllamaPs};
pub use quantity::{human, Ordering3, Quantity, GIB, KIB, MIB, TIB};
pub use reconciled::{
    Comparison, Component, ComponentRow, DeviceRow, EstimatePart, Reconciled, Verdict,
};
pub use runtime::{Era, Launcher, Placer, Runtime, ServingEngine};
pub use scheduler::{RetryKind, Scheduler};
pub use serving::{Count, Figure, RankFigures, Ratio, ServingFigures, StartFailure};
pub use snapshot::{normalize_bus_id, same_uuid, SmiFormat, SmiGpu, SmiProcess, Snapshot};
pub use timeline::{
    CacheEntry, FailedRequest, ServingTimeline, TimelineEnd, TimelineLimits, TimelinePeaks,
    TimelineSample,
};
pub use whatif::{
    BucketMove, EffectFigure, EstimateReplay, EstimatorCharges, LeverEffect, MeasuredReplay,
    PlacedGpu, Placement, ProjectorPadding, ReplayFigures, ReplayOutcome, ReplayVerdict, WhatIf,
};
