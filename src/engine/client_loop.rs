//! bench_serving's client as every event loop runs it (the unified servers of `sim`, the PD
//! deployment of `pd`): the dispatch order, the `--max-concurrency` semaphore, the
//! single-threaded loop's send bursts, the server's front-end queue (`frontend`), each request's observed
//! token times, the run's safety budgets and the outcomes the metrics read. A loop supplies
//! only its server side through [`ServerSide`].
use super::admission::Refusal;
use super::event::{DispatchOrder, Event, EventQueue};
use super::frontend::Frontend;
use super::input::{ClientRequest, SimInput};
use super::stream::{ClientLoop, Streams};
use crate::error::{Error, Result};
use crate::metrics::record::RequestOutcome;
use std::collections::VecDeque;
use std::ops::{Index, IndexMut};

/// One request as the client observes it.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientState {
    pub start_ns: u64,
    pub first_obs: Option<u64>,
    /// (observation time of its prefill token, decode steps seen then): its cohort while no
    /// decode step has run since it joined the running batch.
    pub joined: Option<(u64, u64)>,
    /// Observation time of its last token, kept while retracted.
    pub last_obs: u64,
    pub done_obs: Option<u64>,
    pub failed: bool,
    /// `max_new_tokens` after the server's clip: the output length it will report.
    pub out_len: u64,
}

impl ClientState {
    /// The request leaves the running batch (retracted): settles its cohort in `streams` and
    /// keeps the observation time of its last token for when it resumes.
    pub fn retract(&mut self, streams: &mut Streams) {
        let pending = self
            .joined
            .take()
            .filter(|j| j.1 == streams.decode_steps())
            .map(|j| j.0);
        self.last_obs = streams.leave(pending);
    }
}

/// The client's side of a run: every request's state, the semaphore and the send loop.
#[derive(Debug, Clone)]
pub struct BenchClient {
    requests: Vec<ClientState>,
    client_loop: ClientLoop,
    waiters: VecDeque<usize>,
    in_flight: u64,
    /// The server's front-end process (tokenizer queue; vLLM's API server).
    frontend: Frontend,
    /// Requests whose send is queued in the client's busy event loop.
    pending_sends: Vec<usize>,
    flush_at: Option<u64>,
}

/// What an event loop's servers provide to the client loop.
pub trait ServerSide {
    /// The server's admission of a request: its `max_new_tokens` after any clip, or a refusal
    /// (the request then fails after one round trip).
    fn admit(&self, request: &ClientRequest) -> std::result::Result<u64, Refusal>;
    /// The client and the event queue.
    fn client_and_queue(&mut self) -> (&mut BenchClient, &mut EventQueue);
    /// A server event (`ServerArrival`, `StepEnd`) at `t`.
    fn server_event(&mut self, ev: Event, t: u64) -> Result<()>;
}

/// Runs the event loop of `server` to completion; returns the time of the last event.
pub fn run_events(input: &SimInput, server: &mut impl ServerSide) -> Result<u64> {
    // One dispatch in the queue at a time, pushed when the previous one is popped.
    let mut dispatches = DispatchOrder::new(&input.dispatch_ns);
    if let Some(i) = dispatches.next() {
        server
            .client_and_queue()
            .1
            .push(input.dispatch_ns[i], Event::Dispatch(i));
    }
    let mut now = 0;
    loop {
        let (client, q) = server.client_and_queue();
        let Some((t, ev)) = q.pop() else {
            return Ok(now);
        };
        if t < now {
            return Err(Error::Msg(format!(
                "internal: clock went backwards from {now} to {t}"
            )));
        }
        now = t;
        check_budget(input, q.processed, t)?;
        match ev {
            Event::Dispatch(i) => {
                if let Some(j) = dispatches.next() {
                    q.push(input.dispatch_ns[j], Event::Dispatch(j));
                }
                client.dispatch(input, i, t, q);
            }
            Event::ClientDone(_) => client.done(t, q),
            Event::ClientFlush => {
                for i in client.flush(t, q) {
                    let admitted = server.admit(&input.requests[i]);
                    let (client, q) = server.client_and_queue();
                    client.send_to_server(input, i, t, admitted, q);
                }
            }
            ev => server.server_event(ev, t)?,
        }
    }
}

/// The run's safety budgets: at most `--max-events` events and `--max-wall-seconds` of wall
/// clock (checked every 4096 events; it never changes a result, only turns a run into an error).
fn check_budget(input: &SimInput, processed: u64, t: u64) -> Result<()> {
    if processed > input.max_events {
        return Err(Error::Budget(format!(
            "more than {} events (raise --max-events if the run is really this large)",
            input.max_events
        )));
    }
    if let Some((start, secs)) = input.deadline {
        if processed % 4096 == 0 && start.elapsed().as_secs_f64() > secs {
            return Err(Error::Budget(format!(
                "more than {secs} s of wall-clock time at {:.1} s of simulated time (raise --max-wall-seconds)",
                t as f64 / 1e9
            )));
        }
    }
    Ok(())
}

impl BenchClient {
    pub fn new(input: &SimInput) -> Self {
        BenchClient {
            requests: vec![ClientState::default(); input.requests.len()],
            client_loop: ClientLoop::new(input.client_send_ns.round() as u64),
            waiters: VecDeque::new(),
            in_flight: 0,
            frontend: Frontend::new(input.frontend),
            pending_sends: Vec::new(),
            flush_at: None,
        }
    }

    pub fn iter(&self) -> std::slice::Iter<'_, ClientState> {
        self.requests.iter()
    }

    /// When the client timestamps a chunk the server emitted at `emit_ns`.
    pub fn observe(&self, emit_ns: u64) -> u64 {
        self.client_loop.observe(emit_ns)
    }

    /// When the client timestamps a step's `chunks` streamed tokens emitted at `emit_ns`,
    /// after the server's front end has written them.
    pub fn stream(&mut self, emit_ns: u64, chunks: u64) -> u64 {
        let written = self.frontend.chunks(emit_ns, chunks);
        self.client_loop.observe(written)
    }

    /// Serial work of the server's front-end process so far, ns.
    pub fn frontend_busy_ns(&self) -> u64 {
        self.frontend.busy_ns()
    }

    /// bench_serving's dispatch loop yields request `i`: it waits for the semaphore.
    fn dispatch(&mut self, input: &SimInput, i: usize, t: u64, q: &mut EventQueue) {
        match input.max_concurrency {
            Some(cap) if self.in_flight >= cap => self.waiters.push_back(i),
            _ => self.start(i, t, q),
        }
    }

    fn start(&mut self, i: usize, t: u64, q: &mut EventQueue) {
        self.in_flight += 1;
        self.requests[i].start_ns = t;
        let sent = self.client_loop.send(t);
        self.pending_sends.push(i);
        if self.flush_at.is_none() {
            self.flush_at = Some(sent);
            q.push(sent, Event::ClientFlush);
        }
    }

    /// The client's loop is done with its burst of sends (a burst keeps growing while new
    /// sends join it): returns every queued request, to go out now in send order.
    fn flush(&mut self, t: u64, q: &mut EventQueue) -> Vec<usize> {
        let end = self.client_loop.busy_end();
        if end > t {
            self.flush_at = Some(end);
            q.push(end, Event::ClientFlush);
            return Vec::new();
        }
        self.flush_at = None;
        std::mem::take(&mut self.pending_sends)
    }

    /// Request `i`, sent at `sent`, reaches the server: refused ones fail one round trip
    /// later; admitted ones queue for the tokenizer and then arrive (`ServerArrival(i)`).
    fn send_to_server(
        &mut self,
        input: &SimInput,
        i: usize,
        sent: u64,
        admitted: std::result::Result<u64, Refusal>,
        q: &mut EventQueue,
    ) {
        let o = &input.overheads;
        let at_server = sent + o.request_latency_ns.round() as u64;
        let c = &mut self.requests[i];
        match admitted {
            Ok(max_new) => c.out_len = max_new,
            Err(_) => {
                c.failed = true;
                let back = at_server + o.request_latency_ns.round() as u64;
                c.done_obs = Some(back);
                q.push(back, Event::ClientDone(i));
                return;
            }
        }
        let tok = (input.requests[i].prompt_len as f64 * o.tokenize_per_token_ns).round() as u64;
        let arrive = self.frontend.request(at_server, tok);
        q.push(arrive, Event::ServerArrival(i));
    }

    /// A request's last chunk arrived: its semaphore slot goes to the next waiter.
    fn done(&mut self, t: u64, q: &mut EventQueue) {
        self.in_flight -= 1;
        if let Some(w) = self.waiters.pop_front() {
            self.start(w, t, q);
        }
    }

    /// Request `i`'s last token was observed at `obs`.
    pub fn finished(&mut self, i: usize, obs: u64, q: &mut EventQueue) {
        self.requests[i].done_obs = Some(obs);
        q.push(obs, Event::ClientDone(i));
    }

    /// What bench_serving records: each request's outcome, the run's duration (its last
    /// response, or the dispatch loop's end, plus the closing `/get_server_info` round trip)
    /// and the number of failures; `unfinished(i)` is the error for a request never done.
    pub fn outcomes(
        &self,
        input: &SimInput,
        unfinished: impl Fn(usize) -> Error,
    ) -> Result<(Vec<RequestOutcome>, u64, u64)> {
        let mut requests = Vec::with_capacity(self.requests.len());
        let mut end = input.dispatch_end_ns;
        let mut failed = 0;
        for (i, c) in self.requests.iter().enumerate() {
            let Some(done) = c.done_obs else {
                return Err(unfinished(i));
            };
            end = end.max(done);
            failed += c.failed as u64;
            requests.push(RequestOutcome {
                prompt_len: input.requests[i].prompt_len,
                output_len: if c.failed { 0 } else { c.out_len },
                success: !c.failed,
                start_ns: c.start_ns,
                ttft_ns: c.first_obs.map_or(0, |f| f - c.start_ns),
                latency_ns: done - c.start_ns,
            });
        }
        if input.server_info_at_end {
            end += 2 * input.overheads.request_latency_ns.round() as u64;
        }
        Ok((requests, end, failed))
    }
}

impl Index<usize> for BenchClient {
    type Output = ClientState;
    fn index(&self, i: usize) -> &ClientState {
        &self.requests[i]
    }
}

impl IndexMut<usize> for BenchClient {
    fn index_mut(&mut self, i: usize) -> &mut ClientState {
        &mut self.requests[i]
    }
}
