NAME sample_model
OBJSENSE
    MAX
ROWS
 N  obj
 G  rng
 L  cap
 G  lowf
 E  eq
 N  freerow
 G  empty
COLUMNS
    x         obj       3
    x         rng       1
    x         cap       1
    x         lowf      -1
    x         freerow   1
    MARKER0   'MARKER'  'INTORG'
    y_1       obj       2
    y_1       rng       2
    y_1       eq        1
    _$z       obj       5
    _$z       cap       4
    _$z       eq        1
    MARKER1   'MARKER'  'INTEND'
    free      obj       -1
    free      cap       1
    free      lowf      1
    fixed     lowf      1e-07
    unused    obj       0
    MARKER2   'MARKER'  'INTORG'
    n         obj       -0.5
    n         cap       0.1
    MARKER3   'MARKER'  'INTEND'
RHS
    RHS       obj       -1.25
    RHS       rng       -1
    RHS       cap       6
    RHS       lowf      -4
    RHS       eq        3
    RHS       empty     -1
RANGES
    RNG       rng       9.5
    RNG       empty     2
BOUNDS
 LO BND       x         -2
 UP BND       x         10
 LO BND       y_1       -3
 UP BND       y_1       7
 BV BND       _$z
 FR BND       free
 FX BND       fixed     2.5
 MI BND       unused
 UP BND       unused    4
 LO BND       n         0
 PL BND       n
ENDATA
