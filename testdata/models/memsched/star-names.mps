* Issue 19, item 1: names may start with '*' (Xpress writes *RHS* and *OBJ*); only a '*' in
* column 1 starts a comment. Optimum 2 (the RHS line used to be dropped: 0).
NAME          STAR
ROWS
 N  *OBJ*
 G  LIM
COLUMNS
    X         *OBJ*        1.0   LIM          1.0
    *Y        *OBJ*        3.0   LIM          1.0
RHS
    *RHS*     LIM          2.0
ENDATA
