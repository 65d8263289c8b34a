//! The discrete-event core: the event queue and clock (`event`), SGLang's scheduler
//! (`scheduler`; vLLM V1's in `vllm`, either behind `dispatch::EngineScheduler`; admission in `scheduler::adder`, decode memory and retraction in
//! `scheduler/decode.rs`), the running batch as O(1) aggregates (`running`), streamed tokens
//! and ITLs (`stream`), the server's serial front-end process (`frontend`), and the loop that ties client and server together (`sim`).
pub mod admission;
pub mod client_loop;
pub mod dispatch;
pub mod event;
pub mod frontend;
pub mod input;
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
pub mod vllm;
pub mod window_kv;
