//! rustls's key updates, as the shared [`KeyUpdates`] harness drives them
//! (rustls 0.23's API; not written for 0.24).
//!
//! The client calls `refresh_traffic_keys`, which queues a KeyUpdate with
//! update_requested under the old keys and installs its next sending keys;
//! the server, processing it, installs the client's next keys for reading,
//! and queues its own KeyUpdate (update_not_requested) with its next
//! sending keys, which go out with its next `write_tls`.

use std::sync::Arc;

use regress_measure::HarnessError;

use super::api::{ConnectionTrafficSecrets, ExtractedSecrets};
use super::config::Configs;
use super::tls::Rustls;
use super::transport::Pair;
use crate::common::error::{ensure, Context as _};
use crate::paths::Profile;
use crate::tls::key_update::KeyUpdate;
#[cfg(doc)]
use crate::tls::key_update::KeyUpdates;

/// The bytes of a side's traffic key and IV (AES-128-GCM, the pinned
/// suite).
fn key_and_iv(secrets: &ConnectionTrafficSecrets) -> Result<(Vec<u8>, Vec<u8>), HarnessError> {
    match secrets {
        ConnectionTrafficSecrets::Aes128Gcm { key, iv } => {
            Ok((key.as_ref().to_vec(), iv.as_ref().to_vec()))
        }
        _ => Err("traffic secrets of another suite than AES-128-GCM".into()),
    }
}

impl KeyUpdate for Rustls {
    /// The configs of [`Tls::configs`](crate::tls::Tls::configs) with
    /// `enable_secret_extraction`, which the check needs. The flag is read
    /// only when secrets are extracted: the handshake and the updates run
    /// the same code with and without it.
    fn key_update_configs(profile: &Profile) -> Result<Configs, HarnessError> {
        let mut configs = Configs::build(profile, None)?;
        let mut client = (*configs.client).clone();
        client.enable_secret_extraction = true;
        let mut server = (*configs.server).clone();
        server.enable_secret_extraction = true;
        configs.client = Arc::new(client);
        configs.server = Arc::new(server);
        Ok(configs)
    }

    /// `refresh_traffic_keys` on the client (update_requested).
    fn update_client(pair: &mut Pair) -> Result<(), HarnessError> {
        pair.client
            .refresh_traffic_keys()
            .context("the client refreshing its traffic keys")
    }

    /// Nothing: the server queued its answer while it processed the
    /// client's KeyUpdate.
    fn update_server(_: &mut Pair) -> Result<(), HarnessError> {
        Ok(())
    }

    /// `writer().write` of all of `bytes` and `write_tls` of every queued
    /// record (the server's KeyUpdate first).
    fn server_send(pair: &mut Pair, bytes: &[u8]) -> Result<(), HarnessError> {
        pair.server.send_all(bytes, &mut pair.server_end)
    }

    /// `read_tls`, `process_new_packets` and `reader().read`.
    fn client_receive(pair: &mut Pair, out: &mut [u8]) -> Result<usize, HarnessError> {
        pair.client.receive(&mut pair.client_end, out)
    }

    /// rustls keeps no count of key updates, but its record sequence
    /// numbers restart at 0 exactly when a direction's keys change (RFC 8446
    /// section 5.3; `prepare_message_encrypter` and
    /// `prepare_message_decrypter` are the only places rustls sets them to
    /// 0). `dangerous_extract_secrets` reports them with the current keys.
    /// After one record each way before the updates and one after, every
    /// direction of both sides must be at sequence number 1 (2 without an
    /// update), and each side's sending key and IV must be the key and IV
    /// its peer reads with.
    fn check_updates(pair: Pair, updates: u8, _: i32) -> Result<(), HarnessError> {
        let client = pair
            .client
            .extract_secrets()
            .context("extracting the client's secrets")?;
        let server = pair
            .server
            .extract_secrets()
            .context("extracting the server's secrets")?;
        let records = if updates == 0 { 2 } else { 1 };
        let sequence = |side: &str, secrets: &ExtractedSecrets| {
            let seen = (secrets.tx.0, secrets.rx.0);
            ensure(seen == (records, records), || {
                format!(
                    "the {side}'s sequence numbers (sending, receiving) are {seen:?}: with \
                     {updates} update(s) each way they are {records}"
                )
            })
        };
        sequence("client", &client)?;
        sequence("server", &server)?;
        ensure(
            key_and_iv(&client.tx.1)? == key_and_iv(&server.rx.1)?,
            || "the server reads with other keys than the client sends with".into(),
        )?;
        ensure(
            key_and_iv(&server.tx.1)? == key_and_iv(&client.rx.1)?,
            || "the client reads with other keys than the server sends with".into(),
        )
    }
}

#[cfg(test)]
mod tests {
    use regress_measure::Harness as _;

    use super::*;
    use crate::tls::key_update::{self, KeyUpdates, FLIGHT_LEN};

    #[test]
    fn check_fails_without_an_update() {
        key_update::check_fails_without_an_update::<Rustls>();
    }

    /// The sequence numbers fail a connection that did not update, even
    /// with the flights of one that did.
    #[test]
    fn sequence_numbers_fail_without_an_update() {
        let harness = KeyUpdates::<Rustls>::new();
        let setup = harness.setup().expect("setup");
        let plain = key_update::without_update(&harness, &setup, (FLIGHT_LEN, FLIGHT_LEN));
        let error = harness.check(&setup, &plain).expect_err("no update");
        assert!(error.to_string().contains("sequence numbers"), "{error}");
    }
}
