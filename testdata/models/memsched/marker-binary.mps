* Issue 19, item 2: an integer column (MARKER INTORG ... INTEND) that no BOUNDS line names is
* binary, as HiGHS, CBC and MIPLIB read it. minimize -x, x <= 5.5: optimum -1 (not -5).
NAME          MARKERBIN
ROWS
 N  COST
 L  LIM
COLUMNS
    MARKER                 'MARKER'                 'INTORG'
    X         COST        -1.0   LIM          1.0
    MARKER                 'MARKER'                 'INTEND'
RHS
    RHS       LIM          5.5
ENDATA
