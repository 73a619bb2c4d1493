"""Business days of the infraction procedure: weekdays that are not a national or state holiday
(the `holidays` package, the state from the profile) nor a municipal holiday of the profile.

Deadlines "em dias úteis" (BG art. 69) count business days after the day of ciência: the first
counted day is the next business day, and the deadline is the N-th one. Deadlines in plain days
(art. 68 §2, art. 69-I) count calendar days.
"""

from __future__ import annotations

from datetime import date, timedelta
from functools import cached_property

import holidays

from core.errors import ProfileError
from core.profile import Procedure, Profile


def procedure_of(profile: Profile) -> Procedure:
    """The profile's procedure section (ProfileError when the profile has none)."""
    if profile.procedure is None:
        raise ProfileError(
            f"profile {profile.id} defines no infraction procedure ([procedure])",
            hint="add the [procedure] section to the profile (deadlines, state, municipal "
            "holidays)",
        )
    return profile.procedure


class BusinessCalendar:
    """National + state holidays (from `holidays`) and the profile's municipal holidays."""

    def __init__(self, state: str, municipal: dict[str, str]) -> None:
        self.state = state
        self.municipal = {
            (int(k.split("-")[0]), int(k.split("-")[1])): name for k, name in municipal.items()
        }

    @classmethod
    def from_profile(cls, profile: Profile) -> BusinessCalendar:
        proc = procedure_of(profile)
        return cls(proc.state.value, proc.municipal_holidays.value)

    @cached_property
    def _holidays(self) -> holidays.HolidayBase:
        return holidays.country_holidays("BR", subdiv=self.state, language="pt_BR")

    def holiday_name(self, day: date) -> str | None:
        """The holiday's name when `day` is one (national, state or municipal)."""
        name = self.municipal.get((day.month, day.day))
        if name is not None:
            return name
        got = self._holidays.get(day)
        return None if got is None else str(got)

    def is_business_day(self, day: date) -> bool:
        return day.weekday() < 5 and self.holiday_name(day) is None

    def add_business_days(self, start: date, n: int) -> date:
        """The N-th business day after `start` (start itself is not counted)."""
        day, counted = start, 0
        while counted < n:
            day += timedelta(days=1)
            if self.is_business_day(day):
                counted += 1
        return day
