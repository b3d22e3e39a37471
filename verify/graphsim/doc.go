// Package graphsim replays staged schedules on computation graphs (Checkmate, Jain et al. 2020
// §4; SPEC §4) and searches them exhaustively on tiny graphs. It shares no code with the MILP
// in milp/checkmate: it is the referee every schedule that MILP returns is checked against.
package graphsim
