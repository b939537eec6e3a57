//! The libraries the harnesses measure, as harness names spell them
//! (`s2n_tls::handshake_rsa4096`), in column order: the one list every
//! comparison, table and chart reads.

/// A library of the harnesses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Library {
    /// The first part of its harnesses' names (`s2n_tls`).
    pub id: &'static str,
    /// The name people know it by (`s2n-tls`).
    pub name: &'static str,
    /// Its colour on every chart (colour-blind-safe Tableau hues).
    pub colour: &'static str,
    /// A TLS library (it runs handshakes and records), not only a
    /// cryptographic one (aws-lc-rs, measured on its AEAD paths).
    pub tls: bool,
}

/// Every library, in column order.
pub const ALL: [Library; 4] = [
    Library {
        id: "s2n_tls",
        name: "s2n-tls",
        colour: "#1f77b4",
        tls: true,
    },
    Library {
        id: "rustls",
        name: "rustls",
        colour: "#ff7f0e",
        tls: true,
    },
    Library {
        id: "openssl",
        name: "OpenSSL",
        colour: "#2ca02c",
        tls: true,
    },
    Library {
        id: "aws_lc_rs",
        name: "aws-lc-rs",
        colour: "#9467bd",
        tls: false,
    },
];

/// The colour of anything that is not one of [`ALL`].
const OTHER_COLOUR: &str = "#555555";

/// The TLS libraries, in column order.
pub fn tls() -> impl Iterator<Item = &'static Library> {
    ALL.iter().filter(|library| library.tls)
}

/// The library whose harnesses' names start with `id`.
pub fn named(id: &str) -> Option<&'static Library> {
    ALL.iter().find(|library| library.id == id)
}

/// The name people know `id` by; `id` itself when it is not a library.
pub fn display(id: &str) -> &str {
    named(id).map_or(id, |library| library.name)
}

/// The colour of `id` (`s2n_tls`), grey for anything else.
pub fn colour(id: &str) -> &'static str {
    named(id).map_or(OTHER_COLOUR, |library| library.colour)
}

/// Where `id` goes among the columns; after all of them when it is not a
/// library.
pub fn order(id: &str) -> usize {
    ALL.iter()
        .position(|library| library.id == id)
        .unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_entry_per_library_and_colour() {
        for (i, a) in ALL.iter().enumerate() {
            for b in &ALL[i + 1..] {
                assert_ne!(a.id, b.id);
                assert_ne!(a.colour, b.colour);
            }
        }
        assert_eq!(
            tls().map(|l| l.id).collect::<Vec<_>>(),
            ["s2n_tls", "rustls", "openssl"]
        );
        assert_eq!(display("openssl"), "OpenSSL");
        assert_eq!(display("calibration"), "calibration");
        assert_eq!(colour("calibration"), OTHER_COLOUR);
        assert_eq!(order("rustls"), 1);
    }
}
