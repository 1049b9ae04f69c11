"""Titles a person would give to things, composed from small word lists.

A seeded table whose every row is called one of ten names ('Annual plan', 'Starter bundle') tells a
person nothing: rows cannot be told apart by name and every request sounds the same. These lists
compose a few hundred to a few thousand believable names per kind of thing (a plan, a meeting, a
to-do, a course, a vehicle, a place, a calendar, a file) from short word lists. Plain data; the seed
defaults draw from them with a seeded generator.
"""

from __future__ import annotations

from itertools import product

__all__ = [
    "GENERIC_TITLES",
    "EVENT_TITLES",
    "TASK_TITLES",
    "DOC_TITLES",
    "COURSE_TITLES",
    "VEHICLE_TITLES",
    "PLACE_TITLES",
    "CALENDAR_TITLES",
    "NOTES",
]

_TOPICS = [
    "Spring", "Summer", "Autumn", "Winter", "Lisbon", "Berlin", "Oslo", "Denver", "Austin", "Kyoto",
    "Nairobi", "Toronto", "Partner", "Vendor", "Customer", "Employee", "Student", "Family", "Weekend",
    "Holiday", "Launch", "Loyalty", "Referral", "Welcome", "Starter", "Community", "Charity", "Alumni",
    "Wellness", "Garden", "Harbour", "Riverside", "Downtown", "Northside", "Coastal", "Mountain",
    "Evening", "Quarterly", "Annual", "Monthly", "Q1", "Q2", "Q3", "Q4", "Pilot", "Legacy", "Green",
    "Silver", "Gold", "Express", "Classic", "Midweek", "Early-bird", "Volunteer", "Regional", "Flagship",
]  # fmt: skip
_KINDS = [
    "plan", "package", "bundle", "campaign", "offer", "membership", "programme", "review", "report",
    "project", "budget", "fund", "pass", "series", "workshop", "kit", "subscription", "service",
    "tour", "edition", "special", "retreat", "drive", "initiative",
]  # fmt: skip
GENERIC_TITLES = [f"{t} {k}" for t, k in product(_TOPICS, _KINDS)]

_TEAMS = [
    "Design", "Sales", "Marketing", "Finance", "Support", "Platform", "Mobile", "Data", "Legal",
    "People", "Product", "Security", "Growth", "Ops", "Research", "Partnerships", "Billing", "Web",
    "Infra", "Editorial",
]  # fmt: skip
_MEETINGS = [
    "team sync", "weekly review", "planning", "retro", "standup", "offsite", "all-hands", "demo",
    "budget review", "kickoff", "office hours", "one-on-one", "roadmap review", "hiring panel",
    "lunch and learn",
]  # fmt: skip
EVENT_TITLES = [f"{t} {m}" for t, m in product(_TEAMS, _MEETINGS)]
CALENDAR_TITLES = [f"{t} calendar" for t in _TEAMS] + [
    "Family calendar", "Holidays", "On-call rota", "Travel", "Birthdays", "Room bookings",
    "Football practice", "School events", "Vet visits", "Book club",
]  # fmt: skip

_TASK_VERBS = [
    "Update", "Review", "Draft", "Fix", "Renew", "Book", "Order", "Plan", "Clean up", "Test",
    "Translate", "Archive", "Reconcile", "Schedule", "Migrate", "Prepare", "Send", "Sign", "Pay",
    "Print",
]  # fmt: skip
_TASK_OBJECTS = [
    "the onboarding guide", "the Q3 newsletter", "the vendor contract", "the launch checklist",
    "the billing database", "the office chairs", "the release notes", "the user interviews",
    "the backlog", "the SSL certificate", "the team offsite", "the March invoices", "the help center",
    "the mobile app", "the travel booking", "the insurance claim", "the board deck", "the tax return",
    "the visa forms", "the supplier list", "the press kit", "the expense report", "the floor plan",
    "the welcome emails", "the parking permits",
]  # fmt: skip
TASK_TITLES = [f"{v} {o}" for v, o in product(_TASK_VERBS, _TASK_OBJECTS)]

_DOC_NAMES = [
    "Q3 budget", "Board deck", "Meeting notes", "Travel itinerary", "Brand guidelines", "Invoice 2041",
    "Team photo", "Project plan", "Customer list", "Contract draft", "Floor plan", "Lease agreement",
    "Price list", "Press release", "Org chart", "Risk register", "Payroll summary", "Site survey",
    "Menu", "Timetable",
]  # fmt: skip
_EXTENSIONS = ["pdf", "docx", "xlsx", "png"]
DOC_TITLES = [f"{n}.{e}" for n, e in product(_DOC_NAMES, _EXTENSIONS)]

_SUBJECTS = [
    "Biology", "Chemistry", "Algebra", "Geometry", "World History", "Economics", "Spanish", "French",
    "Creative Writing", "Physics", "Statistics", "Computer Science", "Art History", "Music Theory",
    "Psychology", "Philosophy", "Earth Science", "Literature", "Civics", "Photography",
]  # fmt: skip
_LEVELS = ["101", "II", "for Beginners", "Honors", "Seminar", "Lab", "Advanced", "Workshop"]
COURSE_TITLES = [f"{s} {lv}" for s, lv in product(_SUBJECTS, _LEVELS)]

_VEHICLES = ["Van", "Truck", "Car", "Bike", "Scooter", "Trailer", "Bus", "Forklift", "Tractor", "Boat"]
VEHICLE_TITLES = [f"{v} {n}" for v, n in product(_VEHICLES, range(1, 41))]

_AREAS = [
    "North", "South", "East", "West", "Harbour", "Airport", "Riverside", "Main Street", "Old Town",
    "Station", "Central", "Hillside", "Market", "Lakeside", "Industrial park",
]  # fmt: skip
_SITES = ["depot", "warehouse", "store", "office", "yard", "car park", "branch", "clinic", "studio"]
PLACE_TITLES = [f"{a} {s}" for a, s in product(_AREAS, _SITES)]

# Short notes, reasons and comments people write on records (the ``sentence`` role).
NOTES = [
    "Please call before delivery.", "Leave it at the front desk.", "Customer asked for a receipt by email.",
    "Follow up next week.", "Urgent: needed before Friday.", "Paid in advance.", "Second reminder sent.",
    "Discussed on the phone, all agreed.", "Waiting for the signed copy.", "Prefers morning appointments.",
    "Gift for a colleague, no prices inside.", "Check the spelling of the name.", "Booked through the website.",
    "Ask for the blue one if available.", "Do not contact on weekends.", "Moved from last month.",
    "Needs manager approval.", "Part of the spring promotion.", "Replaces the broken one.",
    "Door code 4512.", "Allergic to nuts.", "Bring the original documents.", "Invoice to head office.",
    "Wheelchair access needed.", "Quiet room requested.", "Late arrival, after 9 pm.",
    "Pick up from the side entrance.", "Cancelled once before, confirm twice.", "VIP customer.",
    "Split the cost between two cards.", "Reorder when stock is low.", "Fragile, handle with care.",
    "Shared with the finance team.", "Draft, not final yet.", "Agreed discount of 10 percent.",
    "Send the report by Monday.", "Renewal due in the autumn.", "Keep a copy for the auditors.",
    "Includes parking.", "Vegetarian meals for two.",
]  # fmt: skip
