// Line 2 below has an operator without its right-hand side.
const ANSWER: u32 = 42u + ;
fn helper() -> u32 { return ANSWER; }
