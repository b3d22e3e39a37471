* Issue 19, item 5: a column twice in one row. HiGHS keeps the first entry (with a warning), CBC
* refuses the file, memsched used to sum them: refused (ParseError).
NAME          DUPENT
ROWS
 N  COST
 G  LIM
COLUMNS
    X         COST         1.0   LIM          1.0
    X         LIM          1.0
RHS
    RHS       LIM          2.0
ENDATA
