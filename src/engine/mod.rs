//! The discrete-event core: the event queue and clock (`event`), SGLang's scheduler
//! (`scheduler`: admission in `scheduler::adder`, decode memory and retraction in
//! `scheduler/decode.rs`), the running batch as O(1) aggregates (`running`), streamed tokens
//! and ITLs (`stream`), and the loop that ties client and server together (`sim`).
pub mod admission;
pub mod event;
pub mod kv;
pub mod pd;
pub mod radix;
pub mod request;
pub mod router;
pub mod running;
pub mod scheduler;
pub mod sim;
pub mod stream;
pub mod timeline;
