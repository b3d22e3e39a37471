* An integer column with any BOUNDS line is not binary: its other side keeps its default (MI
* here: (-inf, +inf)). minimize -x, x <= 5.5, x integer: optimum -5.
NAME          MARKERMI
ROWS
 N  COST
 L  LIM
COLUMNS
    MARKER                 'MARKER'                 'INTORG'
    X         COST        -1.0   LIM          1.0
    MARKER                 'MARKER'                 'INTEND'
RHS
    RHS       LIM          5.5
BOUNDS
 MI BND       X
ENDATA
