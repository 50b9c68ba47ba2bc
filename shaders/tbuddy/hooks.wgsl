// The init and growth hooks of a heap whose leaves all belong to the tree buddy
// (tbuddy.wgsl): the tbuddy strategy, and UAlloc, whose bins are leaves the tree buddy
// does not see as available, so a range holding one is not trimmed. No loops here.

fn strategy_init(i: u32) {
    tb_init();
}

fn strategy_grow(from_units: u32, to_units: u32) {
    tb_grow(from_units, to_units);
}

fn strategy_trim_check(i: u32, from_units: u32, to_units: u32) -> bool {
    return tb_trim_check(from_units, to_units);
}

fn strategy_trim(from_units: u32, to_units: u32) {
    tb_trim(from_units, to_units);
}
