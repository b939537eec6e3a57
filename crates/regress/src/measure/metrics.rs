//! The figures of a run besides its instruction count: whose instructions
//! they were (sides, stages, glue) and what the heap did.
//!
//! Records, baselines, the gate, `regress noise`, the comparison and the
//! diff all carry them as one map from [`Metric`] to a count, so that a new
//! figure is one variant here and every consumer sees it. The map is
//! checked when read: an unknown name is refused, not ignored.

use std::collections::BTreeMap;

use regress_measure::heap::HeapReport;
use regress_measure::parts::Part;
use serde::{Deserialize, Serialize};

use super::split::Parts;

/// One figure of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// The client's instructions (both its stages).
    Client,
    /// The server's instructions (both its stages).
    Server,
    /// The harness's own instructions between the sides' calls.
    Glue,
    /// Instructions of each stage ([`Part`]).
    ClientHello,
    ServerFlight,
    ClientFinish,
    ServerFinish,
    /// Allocations the run made.
    Allocations,
    /// Bytes the run allocated.
    BytesAllocated,
    /// The most bytes the run's own blocks held at once.
    PeakLiveBytes,
    /// Bytes the client's connection holds right after the handshake.
    ClientHeld,
    /// Bytes the server's connection holds right after the handshake.
    ServerHeld,
    /// Bytes the client holds after the first application record.
    ClientHeldAfterRecord,
    /// Bytes the server holds after the first application record.
    ServerHeldAfterRecord,
    /// For a path on a peer's flight (a hostile path): the bytes the
    /// paying side read, records and headers included.
    ReceivedBytes,
    /// The records it read.
    ReceivedRecords,
    /// The messages it read (handshake messages, application records).
    ReceivedMessages,
}

/// What a metric counts, which decides its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Instructions: judged with the harness's instruction threshold.
    Instructions,
    /// Allocations or bytes: judged with its heap threshold.
    Heap,
    /// The size of the flight a peer sent: judged with the heap threshold
    /// too (a captured flight's size is the library's: its tickets).
    Wire,
}

/// Every figure of one run, by metric.
pub type Metrics = BTreeMap<Metric, u64>;

impl Metric {
    /// Every metric, in reading order.
    pub const ALL: [Metric; 17] = [
        Metric::Client,
        Metric::Server,
        Metric::Glue,
        Metric::ClientHello,
        Metric::ServerFlight,
        Metric::ClientFinish,
        Metric::ServerFinish,
        Metric::Allocations,
        Metric::BytesAllocated,
        Metric::PeakLiveBytes,
        Metric::ClientHeld,
        Metric::ServerHeld,
        Metric::ClientHeldAfterRecord,
        Metric::ServerHeldAfterRecord,
        Metric::ReceivedBytes,
        Metric::ReceivedRecords,
        Metric::ReceivedMessages,
    ];

    pub fn kind(self) -> Kind {
        match self {
            Metric::Client
            | Metric::Server
            | Metric::Glue
            | Metric::ClientHello
            | Metric::ServerFlight
            | Metric::ClientFinish
            | Metric::ServerFinish => Kind::Instructions,
            Metric::ReceivedBytes | Metric::ReceivedRecords | Metric::ReceivedMessages => {
                Kind::Wire
            }
            _ => Kind::Heap,
        }
    }

    /// The threshold this metric is judged with: the harness's instruction
    /// threshold for instructions, its heap threshold for the rest.
    pub fn threshold<T>(self, instructions: T, heap: T) -> T {
        match self.kind() {
            Kind::Instructions => instructions,
            Kind::Heap | Kind::Wire => heap,
        }
    }

    /// The key in files (`server_flight`).
    pub fn key(self) -> &'static str {
        match self {
            Metric::Client => "client",
            Metric::Server => "server",
            Metric::Glue => "glue",
            Metric::ClientHello => "client_hello",
            Metric::ServerFlight => "server_flight",
            Metric::ClientFinish => "client_finish",
            Metric::ServerFinish => "server_finish",
            Metric::Allocations => "allocations",
            Metric::BytesAllocated => "bytes_allocated",
            Metric::PeakLiveBytes => "peak_live_bytes",
            Metric::ClientHeld => "client_held",
            Metric::ServerHeld => "server_held",
            Metric::ClientHeldAfterRecord => "client_held_after_record",
            Metric::ServerHeldAfterRecord => "server_held_after_record",
            Metric::ReceivedBytes => "received_bytes",
            Metric::ReceivedRecords => "received_records",
            Metric::ReceivedMessages => "received_messages",
        }
    }

    /// What a reader calls it, in a message or a table.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Client => "client instructions",
            Metric::Server => "server instructions",
            Metric::Glue => "harness glue instructions",
            Metric::ClientHello => "client_hello instructions",
            Metric::ServerFlight => "server_flight instructions",
            Metric::ClientFinish => "client_finish instructions",
            Metric::ServerFinish => "server_finish instructions",
            Metric::Allocations => "allocations",
            Metric::BytesAllocated => "bytes allocated",
            Metric::PeakLiveBytes => "peak live bytes",
            Metric::ClientHeld => "bytes the client holds after the handshake",
            Metric::ServerHeld => "bytes the server holds after the handshake",
            Metric::ClientHeldAfterRecord => "bytes the client holds after the first record",
            Metric::ServerHeldAfterRecord => "bytes the server holds after the first record",
            Metric::ReceivedBytes => "bytes of the peer's flight",
            Metric::ReceivedRecords => "records of the peer's flight",
            Metric::ReceivedMessages => "messages of the peer's flight",
        }
    }

    /// The unit a count of it is in, for messages.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Allocations => "allocations",
            Metric::ReceivedRecords => "records",
            Metric::ReceivedMessages => "messages",
            _ if self.kind() != Kind::Instructions => "bytes",
            _ => "instructions",
        }
    }
}

/// The figures of a split run and of a heap child, as metrics.
pub fn collect(parts: Option<&Parts>, heap: Option<&HeapReport>) -> Metrics {
    let mut metrics = Metrics::new();
    if let Some(parts) = parts {
        metrics.insert(Metric::Client, parts.client());
        metrics.insert(Metric::Server, parts.server());
        metrics.insert(Metric::Glue, parts.glue);
        for (metric, part) in [
            (Metric::ClientHello, Part::ClientHello),
            (Metric::ServerFlight, Part::ServerFlight),
            (Metric::ClientFinish, Part::ClientFinish),
            (Metric::ServerFinish, Part::ServerFinish),
        ] {
            metrics.insert(metric, parts.get(part));
        }
    }
    if let Some(heap) = heap {
        let (allocations, bytes) = heap.run.values().fold((0, 0), |(count, bytes), part| {
            (count + part.allocations, bytes + part.bytes)
        });
        metrics.insert(Metric::Allocations, allocations);
        metrics.insert(Metric::BytesAllocated, bytes);
        metrics.insert(Metric::PeakLiveBytes, heap.peak_live_bytes);
        if let Some(held) = &heap.held_after_handshake {
            metrics.insert(Metric::ClientHeld, held.client.bytes);
            metrics.insert(Metric::ServerHeld, held.server.bytes);
        }
        if let Some(held) = &heap.held_after_first_record {
            metrics.insert(Metric::ClientHeldAfterRecord, held.client.bytes);
            metrics.insert(Metric::ServerHeldAfterRecord, held.server.bytes);
        }
        if let Some(received) = &heap.received {
            metrics.insert(Metric::ReceivedBytes, received.bytes);
            metrics.insert(Metric::ReceivedRecords, received.records);
            metrics.insert(Metric::ReceivedMessages, received.messages);
        }
    }
    metrics
}

/// Whether a run's metrics include its split by side.
pub fn is_split(metrics: &Metrics) -> bool {
    metrics.contains_key(&Metric::Client)
}

#[cfg(test)]
mod tests {
    use super::*;
    use regress_measure::heap::{Allocated, Held, SidesHeld};

    #[test]
    fn parts_and_heap_become_metrics_with_file_keys() {
        let parts = Parts {
            client_hello: 10,
            server_flight: 20,
            client_finish: 30,
            server_finish: 40,
            glue: 5,
        };
        let mut heap = HeapReport {
            peak_live_bytes: 700,
            held_after_handshake: Some(SidesHeld {
                client: Held {
                    blocks: 2,
                    bytes: 300,
                },
                server: Held {
                    blocks: 3,
                    bytes: 400,
                },
            }),
            ..HeapReport::default()
        };
        heap.run.insert(
            "glue".into(),
            Allocated {
                allocations: 1,
                bytes: 8,
            },
        );
        heap.run.insert(
            "server_flight".into(),
            Allocated {
                allocations: 4,
                bytes: 92,
            },
        );
        let metrics = collect(Some(&parts), Some(&heap));
        assert_eq!(metrics[&Metric::Client], 40);
        assert_eq!(metrics[&Metric::Server], 60);
        assert_eq!(metrics[&Metric::Allocations], 5);
        assert_eq!(metrics[&Metric::BytesAllocated], 100);
        assert_eq!(metrics[&Metric::ServerHeld], 400);
        assert!(!metrics.contains_key(&Metric::ServerHeldAfterRecord));
        assert!(is_split(&metrics));
        let json = serde_json::to_string(&metrics).expect("json");
        assert!(json.contains("\"server_flight\":20"), "{json}");
        for metric in Metric::ALL {
            assert_eq!(
                serde_json::to_string(&metric).expect("json"),
                format!("\"{}\"", metric.key())
            );
        }
        let unknown: Result<Metrics, _> = serde_json::from_str("{\"servers\": 1}");
        assert!(unknown.is_err());
        assert!(!is_split(&collect(None, Some(&heap))));
        assert!(!metrics.contains_key(&Metric::ReceivedBytes));
    }

    #[test]
    fn a_peer_s_flight_becomes_wire_figures() {
        let heap = HeapReport {
            received: Some(regress_measure::Received {
                bytes: 10_302,
                records: 1_717,
                messages: 1,
            }),
            ..HeapReport::default()
        };
        let metrics = collect(None, Some(&heap));
        assert_eq!(metrics[&Metric::ReceivedBytes], 10_302);
        assert_eq!(metrics[&Metric::ReceivedRecords], 1_717);
        assert_eq!(metrics[&Metric::ReceivedMessages], 1);
        assert_eq!(Metric::ReceivedRecords.kind(), Kind::Wire);
        assert_eq!(Metric::ReceivedMessages.unit(), "messages");
        // A program from before the figure reports no `received`, and a
        // report with one reads back the same.
        let old: HeapReport = serde_json::from_str(
            r#"{"schema":1,"run":{},"peak_live_bytes":0,"live_bytes_at_end":0,
                "held_after_handshake":null,"held_after_first_record":null}"#,
        )
        .expect("an old report");
        assert_eq!(old.received, None);
        let text = serde_json::to_string(&heap).expect("json");
        assert_eq!(
            serde_json::from_str::<HeapReport>(&text).expect("back"),
            heap
        );
    }
}
