"""The fault suite (issue 20): what the server does when what it depends on fails.

Every fault ends in a correct stored state, a clear OpenAI-style error to the client (or none,
when the server can hide the fault), no hang (each test bounds itself), and a healthy server
after. The table maps each fault to what is checked and to the tests, with those that already
covered it elsewhere; ``test_suite_table.py`` checks that each test named exists and that each
test here is named.

The backend answers HTTP 500, 429, garbage, hangs, or drops the stream mid-token
  (over a socket, streamed and not, on SQLite and PostgreSQL)
  checked: 502 / 429 with ``retry-after`` / 504 in OpenAI's envelope, or ``response.failed``;
  stored ``failed`` with the error, the partial output kept ``incomplete``; next requests served
    tests/faults/test_backend_faults.py
      test_a_fault_answers_the_error_and_stores_the_response_failed
      test_a_fault_ends_the_stream_with_response_failed
  the same in-process, in more shapes (error events mid-stream, context overflow, tool output)
    tests/server/test_failures.py
      test_a_failure_answers_the_error_and_is_stored_failed
      test_a_failure_ends_the_stream_with_response_failed
      test_the_server_serves_on_after_a_failure
      test_a_timeout_is_a_504_and_stored_failed
    tests/server/test_upstream_failures.py
      test_failures_are_http_errors_and_stored_failed
  the provider's view: the upstream error each fault becomes
    tests/inference/test_errors.py
      test_stalled_stream_times_out
      test_broken_stream_is_an_upstream_error
      test_invalid_chunk_is_an_upstream_error

The backend down when the server starts, then up (the fake backend started late on its port),
  then down again (a real process, on SQLite and PostgreSQL)
  checked: a 503 ``backend_unavailable`` naming the provider and the connection error, never a
  404; liveness 200, readiness 503; the model served once background discovery finds it, no
  restart; known while down again (a 503 again); the discovery warning once per outage
    tests/faults/test_backend_down.py
      test_a_backend_down_at_start_is_a_503_then_served_once_it_is_up
  readiness: ready, degraded (MCP servers and search sources down), not ready (no backend)
    tests/faults/test_readiness.py
      test_ready_when_every_part_is_up
      test_tools_down_leave_the_server_degraded_not_unready
      test_no_backend_reachable_is_not_ready_and_a_configured_model_a_503
      test_readiness_needs_no_key
      test_a_flood_of_readiness_checks_probes_one_round_at_a_time
    tests/faults/test_background_duties.py
      test_what_a_duty_does_is_kept_for_readiness

URLs with credentials (``http://user:pass@host/``) in the backend's, an MCP server's and a
  webhook endpoint's URL (a real process)
  checked: no error body and no log line holds the password (``***`` stands for the userinfo)
    tests/faults/test_credentials_in_urls.py
      test_no_credentials_in_error_bodies_or_the_log
    tests/test_redact.py
      test_every_error_message_is_scrubbed
      test_log_lines_are_scrubbed

A server that takes the request and never answers (issue 36), with deadlines of 3 s: an MCP
  server (Streamable HTTP silent; an SSE endpoint event naming another origin, then silence; an
  SSE stream that never sends its endpoint; a tool call never answered), a backend stalled
  before or after its first chunk,
  a web search provider, a webhook receiver
  checked: within the deadline, a failed listing / response / search call / webhook test whose
  message names what timed out and the setting; an ordinary request answered meanwhile
    tests/faults/test_deadlines.py
      test_a_silent_mcp_server_fails_its_listing_naming_the_deadline
      test_an_mcp_tool_that_never_returns_fails_its_call_naming_the_deadline
      test_a_stalled_backend_fails_the_response_naming_the_deadline
      test_a_silent_web_search_provider_fails_the_call_naming_the_deadline
      test_a_silent_webhook_receiver_is_an_error_naming_the_deadline
  a background response past ``[limits] response_timeout`` with ``[jobs] concurrency = 1``
  checked: stored ``failed`` naming the budget, its partial output ``incomplete``; an ordinary
  request served meanwhile; the background response queued behind it completes
    tests/faults/test_response_timeout.py
      test_a_background_response_past_it_fails_and_frees_its_slot

PostgreSQL sessions ended under the runner (``pg_terminate_backend``)
  checked: pooled connections swapped unseen; a read, or a transaction that had not committed,
  in flight runs again; a single statement lost in flight is ``DatabaseUnavailableError``
    tests/faults/test_database_runner.py
      test_connections_ended_in_the_pools_cost_no_caller_an_error
      test_a_read_in_flight_is_read_again
      test_an_uncommitted_transaction_in_flight_is_run_again
      test_a_single_statement_lost_in_flight_is_database_unavailable

PostgreSQL sessions ended three times while 8 clients send a mix (a real process)
  checked: every answer 200 or 503 ``database_unavailable``; streams end with their terminal
  event or an ``error`` event; nothing left ``in_progress``; heartbeat, job runner and pools
  recover; no session leaked
    tests/faults/test_database_server.py
      test_sessions_ended_while_requests_flow

The database away for seconds (``ALLOW_CONNECTIONS false``, sessions ended), then back
  checked: 503 while away; a stream's final write settled once back, or (away longer) an
  ``error`` event and the write made later by housekeeping; a background job that cannot settle
  is taken over and run again; background duties survive a failure
    tests/faults/test_database_runner.py
      test_the_database_turned_away_is_unavailable_then_comes_back
    tests/faults/test_database_server.py
      test_a_final_write_lost_while_the_database_is_away_lands_when_it_is_back
      test_a_final_write_lost_for_longer_is_an_error_event_and_lands_later
      test_a_background_response_ending_in_a_long_outage_is_run_again
    tests/faults/test_background_duties.py
      test_a_failing_duty_is_restarted_and_the_others_go_on
      test_a_duty_that_returns_is_done

The filesystem of the files directory full (a real 512 KiB tmpfs)
  checked: 507 ``insufficient_storage``; no partial blob, no row; uploads fit once space is freed
    tests/faults/test_disk_full.py
      test_an_upload_larger_than_the_space_left_leaves_nothing
      test_uploads_fit_again_once_space_is_freed

A process killed with SIGKILL mid-stream, another live (PostgreSQL, one SQLite file)
  checked: the client's connection drops at once; the live process fails the orphan, takes over
  its conversation's lock and its background job; the killed process restarts healthy
    tests/faults/test_crash.py
      test_a_process_killed_mid_stream_is_cleaned_up_by_the_live_one
  killed then restarted alone; stopped with SIGTERM
    tests/e2e/test_restart.py
      test_a_response_in_progress_at_a_crash_is_failed_by_the_next_server
      test_sigterm_finalises_a_running_response_as_cancelled
    tests/e2e/test_background_processes.py
      test_a_killed_processs_job_is_taken_over_and_runs_again
      test_sigterm_hands_a_running_job_back_to_the_queue

A client that disconnects mid-stream
  checked: stored ``cancelled`` with what was streamed; the backend call stopped; the
  conversation freed
    tests/e2e/test_socket.py
      test_client_disconnect_cancels_the_response_and_the_backend_call
      test_a_disconnect_on_a_conversation_adds_nothing_and_frees_it

A client that reads a 200 MB stream 4 KiB at a time, then hangs up
  checked: the backend held back to the socket buffers; the server's RSS flat; others served
  meanwhile; ``cancelled`` at once on hang-up, the backend's answer closed
    tests/faults/test_slow_client.py
      test_a_slow_reader_holds_back_the_stream_and_blocks_no_one

Background responses held by a backend that sends headers and no token, filling their pool;
  one project's backlog of twelve background responses, then another project's one
  (a real socket, both databases; the claim itself, and two runners, in
  ``tests/services/test_job_pools.py``)
  checked: a vector store file is ingested meanwhile (its kind has its own pool) while the
  third held response waits ``queued``; the other project's response is claimed at the first
  free slot, not after the backlog; everything completes once the backend answers
    tests/faults/test_job_pools.py
      test_stuck_background_responses_do_not_hold_up_ingestion
      test_a_projects_backlog_does_not_delay_another_projects_response

Clients that send a request's head or body slowly, or hold many connections (raw sockets, a real
  process, ``[server]`` deadlines of a second or less)
  checked: a head never completed (a byte at a time, or blank lines on a kept-alive connection)
  is closed unanswered; a stalled or trickled body gets a 408 ``request_timeout``; past
  ``max_connections`` a new connection gets a 503 or is closed while the open ones are served;
  ordinary requests served meanwhile
    tests/faults/test_slow_senders.py
      test_slow_heads_are_cut_and_others_are_served
      test_slow_bodies_get_408_and_others_are_served
      test_past_the_most_connections_new_ones_are_refused_open_ones_served

A client that hangs up mid-body (JSON and multipart)
  checked: one debug line each naming the disconnect, no traceback, no error line
    tests/faults/test_slow_senders.py
      test_a_client_gone_mid_body_is_one_debug_line

Load: 2,000 mixed exchanges (stored, streamed, function tools, conversation turns,
  file_search) from 32 connections, on SQLite and PostgreSQL (``python -m bench.soak``)
  checked: no error; RSS growth bounded; fds, threads and database sessions flat
    tests/faults/test_soak.py
      test_thousands_of_mixed_requests_without_an_error_or_a_leak
"""
