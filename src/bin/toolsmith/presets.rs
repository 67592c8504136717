//! The harness presets, built over a root directory.

use std::sync::Arc;

use toolsmith::SessionParts;
use toolsmith::ToolCallManager;
use toolsmith::harness::{FileSystem, LocalFileSystem, ShellConfig, ToolPreset};

use crate::Failure;
use crate::cli::{PresetArgs, PresetName};

/// A manager holding the preset's tools, sandboxed to `--root`.
pub fn manager(args: &PresetArgs) -> Result<ToolCallManager, Failure> {
    preset(args)?
        .into_manager_with(&SessionParts::in_memory("toolsmith"))
        .map_err(Failure::from)
}

/// The preset's tools, sandboxed to `--root`.
pub fn preset(args: &PresetArgs) -> Result<ToolPreset, Failure> {
    let root = std::fs::canonicalize(&args.root).map_err(|error| {
        Failure::new(format!(
            "cannot use {} as the root: {error}",
            args.root.display()
        ))
    })?;
    let fs: Arc<dyn FileSystem> = Arc::new(LocalFileSystem::new(&root).map_err(|error| {
        Failure::new(format!(
            "cannot use {} as the root: {error}",
            root.display()
        ))
    })?);
    Ok(match args.preset {
        PresetName::Standard => ToolPreset::standard(fs),
        PresetName::Files => ToolPreset::files(Arc::clone(&fs)) + ToolPreset::file_search(fs),
        PresetName::Shell => ToolPreset::shell_with(ShellConfig::new(root)),
        PresetName::Minimal => ToolPreset::minimal_sub_agent(fs),
    })
}
