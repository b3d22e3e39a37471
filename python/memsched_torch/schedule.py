"""Chains and rematerialization sequences as memsched writes them, and 004's memory model.

`Chain` reads and writes memsched.chain/v1 (docs/format.md) in bytes and seconds. `parse_sequence`
reads every format `memsched verify --problem remat` accepts (docs/verify.md): memsched's own
`remat --json` output (its `sequence` key), a JSON array of {"op", "stage"}, and the plain format
`Fall^1 Fck^2 … B^1`. `simulate` replays a sequence under 004's rules (SPEC §1, the same rules as
memsched's verify.RematState.Apply) and gives the memory of every operation: the prediction that
the executor's measurement is compared with, step by step, and the check that refuses a sequence
or budget that does not fit the chain before anything runs.
"""

import json
import re
from dataclasses import dataclass, field

KINDS = ("Fall", "Fck", "Fn", "B")
_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15,
          "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50}
_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


class ScheduleError(ValueError):
    """A sequence, schedule or chain that does not fit: the message is one line for the user."""


@dataclass
class Stage:
    name: str
    uf: float
    ub: float
    a: int
    abar: int
    delta: int
    of: int = 0
    ob: int = 0
    w: int = 0
    # o_f and o_b as the storage tracker measured them, when this process profiled the stage
    # (None from a file): on CUDA the profile's o_f/o_b may be the allocator's, which is larger
    of_storages: int = None
    ob_storages: int = None


@dataclass
class Chain:
    """A memsched chain: stages 1..L+1 (the last the loss), input a^0 and δ^0 sizes in bytes."""
    name: str
    a0: int
    delta0: int
    stages: list = field(default_factory=list)

    def __len__(self):
        return len(self.stages)

    def stage(self, l):
        return self.stages[l - 1]

    def size_a(self, l):
        return self.a0 if l == 0 else self.stage(l).a

    def size_delta(self, l):
        return self.delta0 if l == 0 else self.stage(l).delta

    @classmethod
    def from_json(cls, obj, source="chain"):
        if obj.get("format") != "memsched.chain/v1":
            raise ScheduleError(f"{source}: format: {obj.get('format')!r}: not memsched.chain/v1")
        units = obj.get("units", {})
        mu = _UNITS[units.get("memory", "B")]
        tu = _TIME[units.get("time", "s")]

        def mem(v):
            return int(round(v * mu))

        inp = obj["input"]
        stages = []
        for s in obj["stages"]:
            a = mem(s["a"])
            stages.append(Stage(name=s.get("name", ""), uf=s["uf"] * tu, ub=s["ub"] * tu, a=a,
                                abar=mem(s.get("abar", s["a"])), delta=mem(s.get("delta", s["a"])),
                                of=mem(s.get("of", 0)), ob=mem(s.get("ob", 0)), w=mem(s.get("w", 0))))
        return cls(name=obj.get("name", ""), a0=mem(inp["a"]), delta0=mem(inp.get("delta", inp["a"])),
                   stages=stages)

    @classmethod
    def load(cls, path):
        with open(path) as f:
            return cls.from_json(json.load(f), source=path)

    def to_json(self):
        return {
            "format": "memsched.chain/v1",
            "name": self.name,
            "units": {"memory": "B", "time": "s"},
            "input": {"a": self.a0, "delta": self.delta0},
            "stages": [{"name": s.name, "uf": s.uf, "ub": s.ub, "a": s.a, "abar": s.abar,
                        "delta": s.delta, "of": s.of, "ob": s.ob, "w": s.w} for s in self.stages],
        }


@dataclass(frozen=True)
class Op:
    kind: str  # Fall, Fck, Fn, B
    stage: int

    def __str__(self):
        return f"{self.kind}^{self.stage}"


_TOKEN = re.compile(r"^([A-Za-z]+)\^(-?\d+)$")


def parse_sequence(text, source="sequence"):
    """Parse a rematerialization sequence in any format `memsched verify` accepts."""
    s = text.lstrip()
    if s.startswith("{") or s.startswith("["):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise ScheduleError(f"{source}: invalid JSON: {e}") from None
        if isinstance(obj, dict):
            if "sequence" not in obj:
                keys = ", ".join(sorted(obj)) or "none"
                raise ScheduleError(f"{source}: no 'sequence' key (keys: {keys}); "
                                    "want the output of memsched remat --json or a list of operations")
            if obj.get("feasible") is False:
                raise ScheduleError(f"{source}: memsched found no feasible sequence (feasible: false)")
            obj = obj["sequence"]
        if not isinstance(obj, list):
            raise ScheduleError(f"{source}: sequence is not a JSON list")
        ops = []
        for i, o in enumerate(obj):
            if not isinstance(o, dict) or "op" not in o or "stage" not in o:
                raise ScheduleError(f"{source}: sequence[{i}]: {o!r} is not {{\"op\": KIND, \"stage\": N}}")
            ops.append(_op(o["op"], o["stage"], f"{source}: sequence[{i}]"))
        return ops
    ops = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0]
        for tok in re.split(r"[\s,]+", line):
            if not tok:
                continue
            m = _TOKEN.match(tok)
            if not m:
                raise ScheduleError(f"{source}: line {n}: {tok!r} is not KIND^STAGE (e.g. Fck^3)")
            ops.append(_op(m.group(1), int(m.group(2)), f"{source}: line {n}"))
    return ops


def _op(kind, stage, where):
    if kind == "Del":
        raise ScheduleError(f"{where}: Del^{stage}: Del exists only in the free-delete variant "
                            "(SPEC §1), which the executor does not run")
    if kind not in KINDS:
        raise ScheduleError(f"{where}: unknown operation {kind!r} (want Fall, Fck, Fn or B)")
    if not isinstance(stage, int) or isinstance(stage, bool):
        raise ScheduleError(f"{where}: stage {stage!r} is not an integer")
    return Op(kind, stage)


def format_sequence(ops):
    return " ".join(str(o) for o in ops)


NONE, PLAIN, FULL = 0, 1, 2


@dataclass
class Simulation:
    makespan: float
    peak: int
    peak_op: int  # index of the operation where the peak is first reached (-1: initial state)
    memory: list  # memory during each operation (bytes), 004's accounting
    forwards: list  # forwards per stage, index 0 unused


class RematState:
    """004's state (SPEC §1; memsched's verify.RematState): what each stage stores (NONE, PLAIN
    a^ℓ or FULL ā^ℓ; index 0 is a^0) and the current gradient δ^t."""

    def __init__(self, chain):
        self.chain = chain
        self.acts = [NONE] * (len(chain) + 1)
        self.acts[0] = PLAIN
        self.t = len(chain)

    def size(self, l, full):
        """Bytes of a^ℓ (full False) or ā^ℓ (full True; a^0 for ℓ = 0)."""
        if l == 0:
            return self.chain.a0
        return self.chain.stage(l).abar if full else self.chain.stage(l).a

    def memory(self):
        m = self.chain.size_delta(self.t)
        for l, a in enumerate(self.acts):
            if a != NONE:
                m += self.size(l, a == FULL)
        return m

    def apply(self, op):
        """Apply op; return the memory during it. Raises ScheduleError (the reason alone) when
        op is not valid in this state; the state is then unchanged."""
        chain, acts, n = self.chain, self.acts, len(self.chain)
        l = op.stage
        if l < 1 or l > n:
            raise ScheduleError(f"stage {l} out of range 1..{n} (the chain has {n} stages, the loss included)")
        if self.t == 0:
            raise ScheduleError("the sequence is already complete (δ^0 exists)")
        st = chain.stage(l)
        base = self.memory()
        prev = acts[l - 1]
        if op.kind in ("Fall", "Fck", "Fn"):
            if l > self.t:
                raise ScheduleError(f"F^{l} is after the current gradient δ^{self.t}: stage {l} is already "
                                    "back-propagated")
            if prev == NONE:
                raise ScheduleError(f"input a^{l - 1} is not stored")
            if op.kind == "Fn" and prev != PLAIN:
                raise ScheduleError(f"F_∅^{l} needs a plain a^{l - 1}, but ā^{l - 1} is stored")
            if acts[l] == FULL:
                raise ScheduleError(f"ā^{l} is already stored")
            if acts[l] == PLAIN and op.kind != "Fall":
                raise ScheduleError(f"a^{l} is already stored")
            mem = base + (st.abar if op.kind == "Fall" else st.a) + st.of
            if op.kind == "Fn":
                acts[l - 1] = NONE
            acts[l] = FULL if op.kind == "Fall" else PLAIN
        else:
            if self.t != l:
                raise ScheduleError(f"δ^{l} is not stored (the current gradient is δ^{self.t})")
            if acts[l] != FULL:
                raise ScheduleError(f"ā^{l} is not stored")
            if prev == NONE:
                raise ScheduleError(f"input a^{l - 1} is not stored")
            mem = base + chain.size_delta(l - 1) + st.ob
            acts[l] = NONE
            if prev == PLAIN:
                acts[l - 1] = NONE
            self.t = l - 1
        return mem

    def copy(self):
        c = RematState.__new__(RematState)
        c.chain, c.acts, c.t = self.chain, list(self.acts), self.t
        return c


def simulate(chain, ops, source="sequence"):
    """Replay ops under 004's rules (SPEC §1; memsched's verify.RematState.Apply): the memory of
    every operation, the makespan and the peak. Raises ScheduleError naming the first operation
    that is not valid, as memsched verify would."""
    n = len(chain)
    state = RematState(chain)
    peak, peak_op, makespan = state.memory(), -1, 0.0
    memory = []
    forwards = [0] * (n + 1)
    for i, op in enumerate(ops):
        try:
            mem = state.apply(op)
        except ScheduleError as e:
            raise ScheduleError(f"{source}: step {i + 1} ({op}): {e}") from None
        st = chain.stage(op.stage)
        if op.kind == "B":
            makespan += st.ub
        else:
            makespan += st.uf
            forwards[op.stage] += 1
        memory.append(mem)
        if mem > peak:
            peak, peak_op = mem, i
    if state.t != 0:
        raise ScheduleError(f"{source}: the sequence ends before δ^0 is computed (current gradient δ^{state.t})")
    return Simulation(makespan=makespan, peak=peak, peak_op=peak_op, memory=memory, forwards=forwards)


_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?\d+)?)\s*([A-Za-z]*)\s*$")


def parse_size(text):
    """'40MiB', '1.5GB', '1024' (bytes) -> int bytes."""
    m = _SIZE.match(str(text))
    if not m or (m.group(2) and m.group(2) not in _UNITS):
        raise ScheduleError(f"size {text!r}: want a number with a unit B, KB, MB, GB, KiB, MiB or GiB")
    return int(round(float(m.group(1)) * _UNITS.get(m.group(2) or "B")))


_RATE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?\d+)?)\s*([A-Za-z]*)(/s)?\s*$")


def check_budget_flags(args, parse_bandwidth):
    """The budget flags that `plan` and `train` share, checked before anything is built or
    profiled (ScheduleError: exit 2, one line): exactly one of --mem (more than 0 bytes) and
    --mem-fraction (a fraction in (0, 10]), --bandwidth read by parse_bandwidth, and the
    offloading levers' need of it."""
    if (args.mem is None) == (args.mem_fraction is None):
        raise ScheduleError("give exactly one of --mem SIZE and --mem-fraction F")
    if args.mem is not None and parse_size(args.mem) <= 0:
        raise ScheduleError(f"--mem {args.mem!r}: want more than 0 bytes")
    if args.mem_fraction is not None and not 0 < args.mem_fraction <= 10:
        raise ScheduleError(f"--mem-fraction {args.mem_fraction}: want a fraction of the store-all peak, e.g. 0.6")
    parse_bandwidth(args.bandwidth)
    if args.lever in ("act-offload", "remat-offload") and not args.bandwidth:
        raise ScheduleError(f"--lever {args.lever} needs --bandwidth (the GPU–CPU link rate, e.g. 12GB/s)")


def parse_rate(text, flag="--bandwidth"):
    """'12GB/s', '16GiB/s', '1e9' (bytes/s) -> float bytes/s, within memsched's 1 B/s to 1 PB/s
    (instances.ParseRate: below or above is a typo or a unit mistake)."""
    m = _RATE.match(str(text))
    unit = (m.group(2) or "B") if m else None
    if not m or unit not in _UNITS or (m.group(2) and not m.group(3)):
        raise ScheduleError(f"{flag} {text!r}: want a rate such as 12GB/s (B/s, KB/s, MB/s, GB/s, TB/s, PB/s or "
                            "KiB/s … PiB/s)")
    r = float(m.group(1)) * _UNITS[unit]
    if not r > 0 or r == float("inf"):
        raise ScheduleError(f"{flag} {text!r}: want a positive rate")
    if not 1 <= r <= 1e15:
        raise ScheduleError(f"{flag} {text!r} is outside 1 B/s to 1 PB/s")
    return r


def fmt_bytes(n):
    return f"{n / 2**20:.2f} MiB"
