"""The application layer: a season handle and the jobs, each written once.

A command (:mod:`arena.cli`) and a flow (:mod:`arena.flows`) only translate: they open a
:class:`~arena.app.handle.SeasonHandle` (the lake, its season, ledger, attempts log, universe and
roster, read once), call one job with their parameters, a clock and a runner, and render the
job's typed result (a table and an exit code; artifacts and a run state). What a job does is
decided here, so ``arena cycle`` and the cycle flow cannot drift apart:

=============  ==========================================  ===================================
job            function                                    called by
=============  ==========================================  ===================================
ingest         :func:`arena.app.ingest.ingest`             ``arena ingest``, ``ingest_flow``
cycle          :func:`arena.app.cycle.cycle`               ``arena cycle``, ``arena season
                                                           backfill|retry``, ``cycle_flow``
monitor        :func:`arena.app.monitor.monitor`           ``arena monitor``, ``monitor_flow``
replay         :func:`arena.app.replay.replay`             ``arena replay|demo``, ``season_flow``
publish        :func:`arena.app.publish.publish`           ``arena season publish``,
                                                           ``publish_flow`` (and the cycle job)
report         :func:`arena.app.publish.report`            ``arena report``
status         :func:`arena.app.status.status`             ``arena season status``
serve          :func:`arena.app.serve.serve`               ``arena serve``
=============  ==========================================  ===================================
"""
