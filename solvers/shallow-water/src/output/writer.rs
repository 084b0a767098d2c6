//! Files written on a thread of their own, so that a run steps on while its pictures,
//! VTK files and checkpoints are encoded and written (on a GPU the stepping thread
//! mostly waits for the device, and writing 20 outputs of Malpasset took longer than
//! its simulation).

use crate::FloodError;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// A file to write, or several.
type Job = Box<dyn FnOnce() -> Result<(), FloodError> + Send>;

/// Jobs queued at most before [`Writer::submit`] waits: each holds a snapshot of the
/// state, so the queue bounds the memory a slow disk can make a run take.
const QUEUED: usize = 2;

/// Runs writing jobs in order on a thread of its own. The first job that fails ends the
/// thread, and its error is returned by the next [`Writer::submit`], [`Writer::wait`] or
/// [`Writer::finish`]; dropping a writer waits for the jobs queued.
pub struct Writer {
    jobs: Option<SyncSender<Job>>,
    thread: Option<JoinHandle<Result<(), FloodError>>>,
}

impl Writer {
    /// Starts the writing thread.
    pub fn start() -> Result<Writer, FloodError> {
        let (jobs, queue) = sync_channel::<Job>(QUEUED);
        let thread = std::thread::Builder::new()
            .name("flood-writer".into())
            .spawn(move || run(queue))
            .map_err(|e| stopped(&format!("cannot start it: {e}")))?;
        Ok(Writer {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    /// Queues `job` (waiting while [`QUEUED`] jobs are ahead of it); the error of an
    /// earlier job if one failed.
    pub fn submit(
        &mut self,
        job: impl FnOnce() -> Result<(), FloodError> + Send + 'static,
    ) -> Result<(), FloodError> {
        let Some(jobs) = &self.jobs else {
            return Err(stopped("it was finished before this file was queued"));
        };
        if jobs.send(Box::new(job)).is_ok() {
            return Ok(());
        }
        // The thread ended: a job failed.
        self.finish()?;
        Err(stopped("it ended before this file was queued"))
    }

    /// Waits until every job queued so far is done; the first error of one.
    pub fn wait(&mut self) -> Result<(), FloodError> {
        let (done, finished) = std::sync::mpsc::channel();
        self.submit(move || {
            let _ = done.send(());
            Ok(())
        })?;
        if finished.recv().is_err() {
            // The thread ended before reaching the marker: a job before it failed.
            return self.finish();
        }
        Ok(())
    }

    /// Waits for every job queued and ends the thread; the first error of a job.
    pub fn finish(&mut self) -> Result<(), FloodError> {
        self.jobs = None;
        match self.thread.take() {
            None => Ok(()),
            Some(thread) => thread
                .join()
                .unwrap_or_else(|_| Err(stopped("it panicked"))),
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // On an error path the caller reports its own error; what was queued is still
        // written (a checkpoint to resume from).
        let _ = self.finish();
    }
}

/// An error of the writing thread itself.
fn stopped(why: &str) -> FloodError {
    FloodError::Output {
        path: "(the thread writing the outputs)".into(),
        cause: why.into(),
    }
}

/// The thread: each job in turn until the queue closes or one fails.
fn run(queue: Receiver<Job>) -> Result<(), FloodError> {
    for job in queue {
        job()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn jobs_run_in_order_and_wait_sees_them_done() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut w = Writer::start().unwrap();
        for i in 0..10 {
            let seen = Arc::clone(&seen);
            w.submit(move || {
                std::thread::sleep(std::time::Duration::from_millis(1));
                seen.lock().unwrap().push(i);
                Ok(())
            })
            .unwrap();
        }
        w.wait().unwrap();
        assert_eq!(*seen.lock().unwrap(), (0..10).collect::<Vec<_>>());
        w.finish().unwrap();
    }

    #[test]
    fn a_failed_job_is_reported_and_stops_the_later_ones() {
        let ran = Arc::new(Mutex::new(0));
        let mut w = Writer::start().unwrap();
        w.submit(|| {
            Err(FloodError::Output {
                path: "a.png".into(),
                cause: "disk full".into(),
            })
        })
        .unwrap();
        let mut error = None;
        for _ in 0..5 {
            let ran = Arc::clone(&ran);
            if let Err(e) = w.submit(move || {
                *ran.lock().unwrap() += 1;
                Ok(())
            }) {
                error = Some(e);
                break;
            }
        }
        let error = match error {
            Some(e) => e,
            None => w.finish().unwrap_err(),
        };
        assert!(error.to_string().contains("disk full"), "{error}");
        assert_eq!(*ran.lock().unwrap(), 0);
    }
}
