import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ParamType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PARAM_TYPE_UNSPECIFIED: _ClassVar[ParamType]
    PARAM_TYPE_INT: _ClassVar[ParamType]
    PARAM_TYPE_FLOAT: _ClassVar[ParamType]
    PARAM_TYPE_CHOICE: _ClassVar[ParamType]
    PARAM_TYPE_BOOL: _ClassVar[ParamType]
    PARAM_TYPE_STRING: _ClassVar[ParamType]

class ItemState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ITEM_STATE_UNSPECIFIED: _ClassVar[ItemState]
    ITEM_STATE_ACCEPTED: _ClassVar[ItemState]
    ITEM_STATE_RUNNING: _ClassVar[ItemState]
    ITEM_STATE_DONE: _ClassVar[ItemState]
    ITEM_STATE_CANCELLED: _ClassVar[ItemState]
    ITEM_STATE_RUN_FINISHED: _ClassVar[ItemState]

class ResultStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RESULT_STATUS_UNSPECIFIED: _ClassVar[ResultStatus]
    RESULT_STATUS_OK: _ClassVar[ResultStatus]
    RESULT_STATUS_FAILED: _ClassVar[ResultStatus]
    RESULT_STATUS_UNSUPPORTED: _ClassVar[ResultStatus]
    RESULT_STATUS_CANCELLED: _ClassVar[ResultStatus]
PARAM_TYPE_UNSPECIFIED: ParamType
PARAM_TYPE_INT: ParamType
PARAM_TYPE_FLOAT: ParamType
PARAM_TYPE_CHOICE: ParamType
PARAM_TYPE_BOOL: ParamType
PARAM_TYPE_STRING: ParamType
ITEM_STATE_UNSPECIFIED: ItemState
ITEM_STATE_ACCEPTED: ItemState
ITEM_STATE_RUNNING: ItemState
ITEM_STATE_DONE: ItemState
ITEM_STATE_CANCELLED: ItemState
ITEM_STATE_RUN_FINISHED: ItemState
RESULT_STATUS_UNSPECIFIED: ResultStatus
RESULT_STATUS_OK: ResultStatus
RESULT_STATUS_FAILED: ResultStatus
RESULT_STATUS_UNSUPPORTED: ResultStatus
RESULT_STATUS_CANCELLED: ResultStatus

class ConnectRequest(_message.Message):
    __slots__ = ("hello", "run_update", "result_report", "heartbeat", "run_progress")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    RUN_UPDATE_FIELD_NUMBER: _ClassVar[int]
    RESULT_REPORT_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    RUN_PROGRESS_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    run_update: RunUpdate
    result_report: ResultReport
    heartbeat: Heartbeat
    run_progress: RunProgress
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., run_update: _Optional[_Union[RunUpdate, _Mapping]] = ..., result_report: _Optional[_Union[ResultReport, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ..., run_progress: _Optional[_Union[RunProgress, _Mapping]] = ...) -> None: ...

class ConnectResponse(_message.Message):
    __slots__ = ("welcome", "start_run", "cancel_run", "result_ack", "reject")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    START_RUN_FIELD_NUMBER: _ClassVar[int]
    CANCEL_RUN_FIELD_NUMBER: _ClassVar[int]
    RESULT_ACK_FIELD_NUMBER: _ClassVar[int]
    REJECT_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    start_run: StartRun
    cancel_run: CancelRun
    result_ack: ResultAck
    reject: Reject
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., start_run: _Optional[_Union[StartRun, _Mapping]] = ..., cancel_run: _Optional[_Union[CancelRun, _Mapping]] = ..., result_ack: _Optional[_Union[ResultAck, _Mapping]] = ..., reject: _Optional[_Union[Reject, _Mapping]] = ...) -> None: ...

class EnrollRequest(_message.Message):
    __slots__ = ("join_token", "proposed_machine_id", "name", "hostname", "agent_version", "enrollment_key")
    JOIN_TOKEN_FIELD_NUMBER: _ClassVar[int]
    PROPOSED_MACHINE_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    ENROLLMENT_KEY_FIELD_NUMBER: _ClassVar[int]
    join_token: str
    proposed_machine_id: str
    name: str
    hostname: str
    agent_version: str
    enrollment_key: str
    def __init__(self, join_token: _Optional[str] = ..., proposed_machine_id: _Optional[str] = ..., name: _Optional[str] = ..., hostname: _Optional[str] = ..., agent_version: _Optional[str] = ..., enrollment_key: _Optional[str] = ...) -> None: ...

class EnrollResponse(_message.Message):
    __slots__ = ("machine_id", "machine_credential", "pending")
    MACHINE_ID_FIELD_NUMBER: _ClassVar[int]
    MACHINE_CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    machine_id: str
    machine_credential: str
    pending: bool
    def __init__(self, machine_id: _Optional[str] = ..., machine_credential: _Optional[str] = ..., pending: _Optional[bool] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("agent_id", "agent_version", "name", "facts", "kernels", "pending_result_ids", "current_run_id", "start_run_parts", "labels", "batched_acks")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    FACTS_FIELD_NUMBER: _ClassVar[int]
    KERNELS_FIELD_NUMBER: _ClassVar[int]
    PENDING_RESULT_IDS_FIELD_NUMBER: _ClassVar[int]
    CURRENT_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    START_RUN_PARTS_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    BATCHED_ACKS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    agent_version: str
    name: str
    facts: MachineFacts
    kernels: _containers.RepeatedCompositeFieldContainer[KernelSpec]
    pending_result_ids: _containers.RepeatedScalarFieldContainer[str]
    current_run_id: str
    start_run_parts: bool
    labels: _containers.ScalarMap[str, str]
    batched_acks: bool
    def __init__(self, agent_id: _Optional[str] = ..., agent_version: _Optional[str] = ..., name: _Optional[str] = ..., facts: _Optional[_Union[MachineFacts, _Mapping]] = ..., kernels: _Optional[_Iterable[_Union[KernelSpec, _Mapping]]] = ..., pending_result_ids: _Optional[_Iterable[str]] = ..., current_run_id: _Optional[str] = ..., start_run_parts: _Optional[bool] = ..., labels: _Optional[_Mapping[str, str]] = ..., batched_acks: _Optional[bool] = ...) -> None: ...

class MachineFacts(_message.Message):
    __slots__ = ("hostname", "os_release", "kernel_release", "kernel_cmdline", "cpu_model", "logical_cpus", "physical_cores", "smt_active", "caches", "memory_bytes", "governor", "boost", "vulnerabilities", "clocksource", "virtualization", "load_average", "arch", "extra", "preflight")
    class CachesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class VulnerabilitiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class ExtraEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    OS_RELEASE_FIELD_NUMBER: _ClassVar[int]
    KERNEL_RELEASE_FIELD_NUMBER: _ClassVar[int]
    KERNEL_CMDLINE_FIELD_NUMBER: _ClassVar[int]
    CPU_MODEL_FIELD_NUMBER: _ClassVar[int]
    LOGICAL_CPUS_FIELD_NUMBER: _ClassVar[int]
    PHYSICAL_CORES_FIELD_NUMBER: _ClassVar[int]
    SMT_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    CACHES_FIELD_NUMBER: _ClassVar[int]
    MEMORY_BYTES_FIELD_NUMBER: _ClassVar[int]
    GOVERNOR_FIELD_NUMBER: _ClassVar[int]
    BOOST_FIELD_NUMBER: _ClassVar[int]
    VULNERABILITIES_FIELD_NUMBER: _ClassVar[int]
    CLOCKSOURCE_FIELD_NUMBER: _ClassVar[int]
    VIRTUALIZATION_FIELD_NUMBER: _ClassVar[int]
    LOAD_AVERAGE_FIELD_NUMBER: _ClassVar[int]
    ARCH_FIELD_NUMBER: _ClassVar[int]
    EXTRA_FIELD_NUMBER: _ClassVar[int]
    PREFLIGHT_FIELD_NUMBER: _ClassVar[int]
    hostname: str
    os_release: str
    kernel_release: str
    kernel_cmdline: str
    cpu_model: str
    logical_cpus: int
    physical_cores: int
    smt_active: bool
    caches: _containers.ScalarMap[str, str]
    memory_bytes: int
    governor: str
    boost: str
    vulnerabilities: _containers.ScalarMap[str, str]
    clocksource: str
    virtualization: str
    load_average: _containers.RepeatedScalarFieldContainer[float]
    arch: str
    extra: _containers.ScalarMap[str, str]
    preflight: _containers.RepeatedCompositeFieldContainer[PreflightCheck]
    def __init__(self, hostname: _Optional[str] = ..., os_release: _Optional[str] = ..., kernel_release: _Optional[str] = ..., kernel_cmdline: _Optional[str] = ..., cpu_model: _Optional[str] = ..., logical_cpus: _Optional[int] = ..., physical_cores: _Optional[int] = ..., smt_active: _Optional[bool] = ..., caches: _Optional[_Mapping[str, str]] = ..., memory_bytes: _Optional[int] = ..., governor: _Optional[str] = ..., boost: _Optional[str] = ..., vulnerabilities: _Optional[_Mapping[str, str]] = ..., clocksource: _Optional[str] = ..., virtualization: _Optional[str] = ..., load_average: _Optional[_Iterable[float]] = ..., arch: _Optional[str] = ..., extra: _Optional[_Mapping[str, str]] = ..., preflight: _Optional[_Iterable[_Union[PreflightCheck, _Mapping]]] = ...) -> None: ...

class PreflightCheck(_message.Message):
    __slots__ = ("check", "status", "detail", "fix")
    CHECK_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    FIX_FIELD_NUMBER: _ClassVar[int]
    check: str
    status: str
    detail: str
    fix: str
    def __init__(self, check: _Optional[str] = ..., status: _Optional[str] = ..., detail: _Optional[str] = ..., fix: _Optional[str] = ...) -> None: ...

class ParamSpec(_message.Message):
    __slots__ = ("name", "type", "default_value", "min", "max", "sweep", "choices", "help")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_VALUE_FIELD_NUMBER: _ClassVar[int]
    MIN_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    SWEEP_FIELD_NUMBER: _ClassVar[int]
    CHOICES_FIELD_NUMBER: _ClassVar[int]
    HELP_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: ParamType
    default_value: str
    min: float
    max: float
    sweep: _containers.RepeatedScalarFieldContainer[str]
    choices: _containers.RepeatedScalarFieldContainer[str]
    help: str
    def __init__(self, name: _Optional[str] = ..., type: _Optional[_Union[ParamType, str]] = ..., default_value: _Optional[str] = ..., min: _Optional[float] = ..., max: _Optional[float] = ..., sweep: _Optional[_Iterable[str]] = ..., choices: _Optional[_Iterable[str]] = ..., help: _Optional[str] = ...) -> None: ...

class SeedReference(_message.Message):
    __slots__ = ("seed", "value", "unit", "machine", "params", "note")
    class ParamsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SEED_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    UNIT_FIELD_NUMBER: _ClassVar[int]
    MACHINE_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    seed: str
    value: float
    unit: str
    machine: str
    params: _containers.ScalarMap[str, str]
    note: str
    def __init__(self, seed: _Optional[str] = ..., value: _Optional[float] = ..., unit: _Optional[str] = ..., machine: _Optional[str] = ..., params: _Optional[_Mapping[str, str]] = ..., note: _Optional[str] = ...) -> None: ...

class KernelSpec(_message.Message):
    __slots__ = ("id", "title", "family", "unit", "description", "params", "seed_reference", "executable")
    ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    FAMILY_FIELD_NUMBER: _ClassVar[int]
    UNIT_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    SEED_REFERENCE_FIELD_NUMBER: _ClassVar[int]
    EXECUTABLE_FIELD_NUMBER: _ClassVar[int]
    id: str
    title: str
    family: str
    unit: str
    description: str
    params: _containers.RepeatedCompositeFieldContainer[ParamSpec]
    seed_reference: SeedReference
    executable: str
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., family: _Optional[str] = ..., unit: _Optional[str] = ..., description: _Optional[str] = ..., params: _Optional[_Iterable[_Union[ParamSpec, _Mapping]]] = ..., seed_reference: _Optional[_Union[SeedReference, _Mapping]] = ..., executable: _Optional[str] = ...) -> None: ...

class RunUpdate(_message.Message):
    __slots__ = ("run_id", "state", "item_index", "item_id", "message", "launches_done", "launches_planned", "launches_wall_s")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ITEM_INDEX_FIELD_NUMBER: _ClassVar[int]
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    LAUNCHES_DONE_FIELD_NUMBER: _ClassVar[int]
    LAUNCHES_PLANNED_FIELD_NUMBER: _ClassVar[int]
    LAUNCHES_WALL_S_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    state: ItemState
    item_index: int
    item_id: str
    message: str
    launches_done: int
    launches_planned: int
    launches_wall_s: float
    def __init__(self, run_id: _Optional[str] = ..., state: _Optional[_Union[ItemState, str]] = ..., item_index: _Optional[int] = ..., item_id: _Optional[str] = ..., message: _Optional[str] = ..., launches_done: _Optional[int] = ..., launches_planned: _Optional[int] = ..., launches_wall_s: _Optional[float] = ...) -> None: ...

class RunProgress(_message.Message):
    __slots__ = ("updates",)
    UPDATES_FIELD_NUMBER: _ClassVar[int]
    updates: _containers.RepeatedCompositeFieldContainer[RunUpdate]
    def __init__(self, updates: _Optional[_Iterable[_Union[RunUpdate, _Mapping]]] = ...) -> None: ...

class Harness(_message.Message):
    __slots__ = ("name", "version", "min_time_s", "estimator", "sample_time_s", "sample_ops", "samples_per_repetition")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    MIN_TIME_S_FIELD_NUMBER: _ClassVar[int]
    ESTIMATOR_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_TIME_S_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_OPS_FIELD_NUMBER: _ClassVar[int]
    SAMPLES_PER_REPETITION_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    min_time_s: float
    estimator: str
    sample_time_s: float
    sample_ops: int
    samples_per_repetition: int
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., min_time_s: _Optional[float] = ..., estimator: _Optional[str] = ..., sample_time_s: _Optional[float] = ..., sample_ops: _Optional[int] = ..., samples_per_repetition: _Optional[int] = ...) -> None: ...

class ResultReport(_message.Message):
    __slots__ = ("result_id", "run_id", "item_id", "status", "kernel_id", "params", "unit", "samples", "iterations", "counters", "harness", "exit_code", "error", "stderr_tail", "started_at", "finished_at", "reruns", "noisy", "attempt_cvs", "sample_launches", "launches", "disturbance")
    class ParamsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class CountersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    RESULT_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    KERNEL_ID_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    UNIT_FIELD_NUMBER: _ClassVar[int]
    SAMPLES_FIELD_NUMBER: _ClassVar[int]
    ITERATIONS_FIELD_NUMBER: _ClassVar[int]
    COUNTERS_FIELD_NUMBER: _ClassVar[int]
    HARNESS_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    STDERR_TAIL_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    RERUNS_FIELD_NUMBER: _ClassVar[int]
    NOISY_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_CVS_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_LAUNCHES_FIELD_NUMBER: _ClassVar[int]
    LAUNCHES_FIELD_NUMBER: _ClassVar[int]
    DISTURBANCE_FIELD_NUMBER: _ClassVar[int]
    result_id: str
    run_id: str
    item_id: str
    status: ResultStatus
    kernel_id: str
    params: _containers.ScalarMap[str, str]
    unit: str
    samples: _containers.RepeatedScalarFieldContainer[float]
    iterations: _containers.RepeatedScalarFieldContainer[int]
    counters: _containers.ScalarMap[str, float]
    harness: Harness
    exit_code: int
    error: str
    stderr_tail: str
    started_at: _timestamp_pb2.Timestamp
    finished_at: _timestamp_pb2.Timestamp
    reruns: int
    noisy: bool
    attempt_cvs: _containers.RepeatedScalarFieldContainer[float]
    sample_launches: _containers.RepeatedScalarFieldContainer[int]
    launches: _containers.RepeatedCompositeFieldContainer[Launch]
    disturbance: float
    def __init__(self, result_id: _Optional[str] = ..., run_id: _Optional[str] = ..., item_id: _Optional[str] = ..., status: _Optional[_Union[ResultStatus, str]] = ..., kernel_id: _Optional[str] = ..., params: _Optional[_Mapping[str, str]] = ..., unit: _Optional[str] = ..., samples: _Optional[_Iterable[float]] = ..., iterations: _Optional[_Iterable[int]] = ..., counters: _Optional[_Mapping[str, float]] = ..., harness: _Optional[_Union[Harness, _Mapping]] = ..., exit_code: _Optional[int] = ..., error: _Optional[str] = ..., stderr_tail: _Optional[str] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., reruns: _Optional[int] = ..., noisy: _Optional[bool] = ..., attempt_cvs: _Optional[_Iterable[float]] = ..., sample_launches: _Optional[_Iterable[int]] = ..., launches: _Optional[_Iterable[_Union[Launch, _Mapping]]] = ..., disturbance: _Optional[float] = ...) -> None: ...

class Launch(_message.Message):
    __slots__ = ("index", "wall_s", "cpu_s", "other_busy_frac", "steal_frac", "throttled_s", "disturbed", "remeasured", "kept", "samples", "short_samples", "disturbed_samples")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    WALL_S_FIELD_NUMBER: _ClassVar[int]
    CPU_S_FIELD_NUMBER: _ClassVar[int]
    OTHER_BUSY_FRAC_FIELD_NUMBER: _ClassVar[int]
    STEAL_FRAC_FIELD_NUMBER: _ClassVar[int]
    THROTTLED_S_FIELD_NUMBER: _ClassVar[int]
    DISTURBED_FIELD_NUMBER: _ClassVar[int]
    REMEASURED_FIELD_NUMBER: _ClassVar[int]
    KEPT_FIELD_NUMBER: _ClassVar[int]
    SAMPLES_FIELD_NUMBER: _ClassVar[int]
    SHORT_SAMPLES_FIELD_NUMBER: _ClassVar[int]
    DISTURBED_SAMPLES_FIELD_NUMBER: _ClassVar[int]
    index: int
    wall_s: float
    cpu_s: float
    other_busy_frac: float
    steal_frac: float
    throttled_s: float
    disturbed: bool
    remeasured: bool
    kept: bool
    samples: int
    short_samples: int
    disturbed_samples: int
    def __init__(self, index: _Optional[int] = ..., wall_s: _Optional[float] = ..., cpu_s: _Optional[float] = ..., other_busy_frac: _Optional[float] = ..., steal_frac: _Optional[float] = ..., throttled_s: _Optional[float] = ..., disturbed: _Optional[bool] = ..., remeasured: _Optional[bool] = ..., kept: _Optional[bool] = ..., samples: _Optional[int] = ..., short_samples: _Optional[int] = ..., disturbed_samples: _Optional[int] = ...) -> None: ...

class Heartbeat(_message.Message):
    __slots__ = ("sent_at", "current_run_id")
    SENT_AT_FIELD_NUMBER: _ClassVar[int]
    CURRENT_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    sent_at: _timestamp_pb2.Timestamp
    current_run_id: str
    def __init__(self, sent_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., current_run_id: _Optional[str] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("machine_id", "heartbeat_interval_s", "server_version", "progress_interval_ms")
    MACHINE_ID_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_INTERVAL_S_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_INTERVAL_MS_FIELD_NUMBER: _ClassVar[int]
    machine_id: str
    heartbeat_interval_s: int
    server_version: str
    progress_interval_ms: int
    def __init__(self, machine_id: _Optional[str] = ..., heartbeat_interval_s: _Optional[int] = ..., server_version: _Optional[str] = ..., progress_interval_ms: _Optional[int] = ...) -> None: ...

class RunItem(_message.Message):
    __slots__ = ("item_id", "kernel_id", "params", "repetitions", "min_time_s", "timeout_s", "rerun_cv", "max_reruns", "launches", "sample_time_s")
    class ParamsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    KERNEL_ID_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    REPETITIONS_FIELD_NUMBER: _ClassVar[int]
    MIN_TIME_S_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    RERUN_CV_FIELD_NUMBER: _ClassVar[int]
    MAX_RERUNS_FIELD_NUMBER: _ClassVar[int]
    LAUNCHES_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_TIME_S_FIELD_NUMBER: _ClassVar[int]
    item_id: str
    kernel_id: str
    params: _containers.ScalarMap[str, str]
    repetitions: int
    min_time_s: float
    timeout_s: float
    rerun_cv: float
    max_reruns: int
    launches: int
    sample_time_s: float
    def __init__(self, item_id: _Optional[str] = ..., kernel_id: _Optional[str] = ..., params: _Optional[_Mapping[str, str]] = ..., repetitions: _Optional[int] = ..., min_time_s: _Optional[float] = ..., timeout_s: _Optional[float] = ..., rerun_cv: _Optional[float] = ..., max_reruns: _Optional[int] = ..., launches: _Optional[int] = ..., sample_time_s: _Optional[float] = ...) -> None: ...

class StartRun(_message.Message):
    __slots__ = ("run_id", "items", "more", "continued")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    MORE_FIELD_NUMBER: _ClassVar[int]
    CONTINUED_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    items: _containers.RepeatedCompositeFieldContainer[RunItem]
    more: bool
    continued: bool
    def __init__(self, run_id: _Optional[str] = ..., items: _Optional[_Iterable[_Union[RunItem, _Mapping]]] = ..., more: _Optional[bool] = ..., continued: _Optional[bool] = ...) -> None: ...

class CancelRun(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class Reject(_message.Message):
    __slots__ = ("result_id", "run_id", "code", "message")
    RESULT_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    result_id: str
    run_id: str
    code: int
    message: str
    def __init__(self, result_id: _Optional[str] = ..., run_id: _Optional[str] = ..., code: _Optional[int] = ..., message: _Optional[str] = ...) -> None: ...

class ResultAck(_message.Message):
    __slots__ = ("result_id", "more_result_ids")
    RESULT_ID_FIELD_NUMBER: _ClassVar[int]
    MORE_RESULT_IDS_FIELD_NUMBER: _ClassVar[int]
    result_id: str
    more_result_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, result_id: _Optional[str] = ..., more_result_ids: _Optional[_Iterable[str]] = ...) -> None: ...
