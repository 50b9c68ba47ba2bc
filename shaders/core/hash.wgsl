// Integer hashing for the random walks and for test patterns.
//
// Provides heap_hash(x), a bijective 32-bit mixer (xor-shift / odd-multiply rounds, the
// usual construction for avalanche on 32-bit integers), and heap_rng_next(state), a
// xorshift32 step for a cheap private random stream. No loops.

fn heap_hash(x: u32) -> u32 {
    var h = x;
    h ^= h >> 16u;
    h *= 0x7feb352du;
    h ^= h >> 15u;
    h *= 0x846ca68bu;
    h ^= h >> 16u;
    return h;
}

// xorshift32 never leaves zero, so callers seed it through heap_hash(..) | 1u.
fn heap_rng_next(state: u32) -> u32 {
    var s = state;
    s ^= s << 13u;
    s ^= s >> 17u;
    s ^= s << 5u;
    return s;
}
