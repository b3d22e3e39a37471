* A tiny MILP for the demo: a 0-1 knapsack (values 60, 100, 120; weights 10, 20, 30; capacity 50).
NAME          tiny
OBJSENSE
    MAX
ROWS
 N  value
 L  weight
COLUMNS
    MARKER    'MARKER'  'INTORG'
    a         value     60
    a         weight    10
    b         value     100
    b         weight    20
    c         value     120
    c         weight    30
    MARKER    'MARKER'  'INTEND'
RHS
    RHS       weight    50
BOUNDS
 BV BND       a
 BV BND       b
 BV BND       c
ENDATA
