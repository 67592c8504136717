use toolsmith::tool_fn;

struct Raw;

/// Raw memory.
#[tool_fn]
impl Raw {
    /// Reads a byte.
    unsafe fn read(&self, address: usize) -> u8 {
        unsafe { *(address as *const u8) }
    }

    /// Reads a byte, later.
    async unsafe fn read_later(&self, address: usize) -> u8 {
        unsafe { *(address as *const u8) }
    }
}

fn main() {}
