//! End-to-end tests: the README's first program, a newcomer's path through
//! the README, and an agent loop against a scripted model. The other
//! integration tests are grouped by concept in folders (`executor/`,
//! `policy/`, `providers/`, `mcp/`, `reliability/`, `schema/`, `tools/`),
//! one test binary each.

mod agent_loop;
mod newcomer;
mod readme;
