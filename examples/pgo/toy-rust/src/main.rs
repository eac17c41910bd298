//! A tiny bytecode interpreter: branchy code where profile feedback (inlining hot
//! paths, block order) changes the instruction count.

#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    Xor,
    Shr,
    Jnz,
    Halt,
    Mix,
    Rot,
    Div,
}

#[inline(never)]
fn rare_fixup(mut acc: u64, i: u64) -> u64 {
    for k in 0..8 {
        acc = (acc.wrapping_mul(31).wrapping_add(i + k)) ^ (acc >> 7);
    }
    acc
}

fn step(code: &[Op], mut acc: u64, i: u64) -> u64 {
    for op in code {
        match op {
            Op::Add => acc = acc.wrapping_add(i),
            Op::Sub => acc = acc.wrapping_sub(i >> 1),
            Op::Mul => acc = acc.wrapping_mul(3),
            Op::Xor => acc ^= i.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            Op::Shr => acc = acc.rotate_right(3),
            Op::Jnz => {
                if i & 1023 == 0 {
                    acc = rare_fixup(acc, i)
                }
            }
            Op::Halt => return acc,
            // Never executed by our programs: they make step() large and branchy.
            Op::Mix => {
                for k in 0..5 {
                    acc = acc.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i ^ k)
                }
            }
            Op::Rot => {
                acc = acc.rotate_left(13);
                acc ^= acc >> 17;
                acc = acc.wrapping_mul(0xff51_afd7_ed55_8ccd)
            }
            Op::Div => acc = acc / (i | 1) + acc % 97,
        }
    }
    acc
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3_000_000);
    let program = std::env::args().nth(2).unwrap_or_else(|| "axmrsja".to_string());
    let code: Vec<Op> = program
        .chars()
        .map(|c| match c {
            'a' => Op::Add,
            's' => Op::Sub,
            'm' => Op::Mul,
            'x' => Op::Xor,
            'r' => Op::Shr,
            'j' => Op::Jnz,
            'M' => Op::Mix,
            'R' => Op::Rot,
            'D' => Op::Div,
            _ => Op::Halt,
        })
        .chain(std::iter::once(Op::Halt))
        .collect();
    let mut acc: u64 = 1;
    for i in 0..n {
        acc = step(&code, acc, i);
    }
    println!("{acc}");
}
