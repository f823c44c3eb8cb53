// `escalates` says where a task begins: the tool must run as a task.
use tinyagents_tools::prelude::*;

/// Ask, then crunch.
#[tool(escalates)]
async fn crunch() {}

fn main() {}
