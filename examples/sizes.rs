use factotum::gdl::Game;
use factotum::interp::Interpreter;
use factotum::machine::*;
fn main() {
    let p = std::env::args().nth(1).unwrap();
    let g = Game::load(std::path::Path::new(&p)).unwrap();
    let mut m = Interpreter::new(&g).unwrap();
    let s = m.initial_state();
    let t = std::time::Instant::now();
    let mut v = Vec::new();
    m.legal_moves(&s, 0, &mut v);
    let mut j = vec![];
    for r in 0..m.roles().len() { m.legal_moves(&s, r, &mut v); j.push(v[0]); }
    m.is_terminal(&s);
    let mut n = s.clone();
    m.next_state(&s, &j, &mut n);
    eprintln!("{:?}", t.elapsed());
    let mut sz = m.relation_sizes(); sz.sort_by_key(|x| std::cmp::Reverse(x.2));
    for x in sz.iter().take(15) { println!("{:?}", x); }
}
