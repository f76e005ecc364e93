"""Campaigns: many kernels × sizes × devices × strategies on Dask.distributed.

:func:`load_campaign` reads a campaign file, :func:`expand` turns it into plain-data
tasks, :func:`run_campaign` runs them on a local cluster (one worker per device) or an
existing one, all writing to one shared store; :func:`write_report` writes its report;
:mod:`gtune.campaign.formats` exports results to the T4 schema and imports Kernel
Tuner caches. Progress is told to the one :class:`~gtune.tuning.Observer` interface, as
:class:`~gtune.tuning.CampaignStarted`, :class:`~gtune.tuning.TaskProgress` and
:class:`~gtune.tuning.TaskFinished` events.
"""

from gtune.api import CampaignResult
from gtune.campaign.report import write_report
from gtune.campaign.runner import (
    SchedulerTls,
    check_scheduler,
    local_cluster,
    resource_name,
    run_campaign,
    run_tasks,
)
from gtune.campaign.spec import CampaignSpec, CampaignTask, expand, load_campaign, parse_campaign
from gtune.tuning.events import CancelToken

__all__ = [
    "CampaignResult",
    "CampaignSpec",
    "CampaignTask",
    "CancelToken",
    "SchedulerTls",
    "check_scheduler",
    "expand",
    "load_campaign",
    "local_cluster",
    "parse_campaign",
    "resource_name",
    "run_campaign",
    "run_tasks",
    "write_report",
]
