"""Small vocabularies a seed draws believable values from, where Faker has no provider: product
and event titles, medication and lab test names, pet names, labels by field name, airports.

Plain data (lists of strings): the seed defaults turn them into ``choice`` generators.
"""

from __future__ import annotations

from .seed_titles import (
    CALENDAR_TITLES,
    COURSE_TITLES,
    DOC_TITLES,
    EVENT_TITLES,
    GENERIC_TITLES,
    PLACE_TITLES,
    TASK_TITLES,
    VEHICLE_TITLES,
)

__all__ = ["AIRPORTS", "DURATIONS", "LABELS", "STATUS_FALLBACK", "TIMES", "labels_for", "titles_for"]

AIRPORTS = [
    "ATL",
    "LAX",
    "ORD",
    "DFW",
    "DEN",
    "JFK",
    "SFO",
    "SEA",
    "LAS",
    "MCO",
    "MIA",
    "BOS",
    "LHR",
    "CDG",
    "AMS",
    "FRA",
    "MAD",
    "BCN",
    "FCO",
    "MUC",
    "ZRH",
    "DUB",
    "IST",
    "DXB",
    "SIN",
    "HND",
    "NRT",
    "ICN",
    "SYD",
    "YYZ",
]
DURATIONS = [
    "PT45M",
    "PT1H",
    "PT1H15M",
    "PT1H30M",
    "PT2H",
    "PT2H20M",
    "PT3H",
    "PT4H10M",
    "PT5H35M",
    "PT7H50M",
    "PT9H5M",
    "PT11H30M",
]
TIMES = [f"{h:02d}:{m:02d}" for h in range(7, 21) for m in (0, 15, 30, 45)]
STATUS_FALLBACK = ["active", "pending", "inactive"]

_ADJ = [
    "Classic",
    "Premium",
    "Everyday",
    "Compact",
    "Deluxe",
    "Organic",
    "Wireless",
    "Lightweight",
    "Vintage",
    "Essential",
    "Ultra",
    "Eco",
]
_PRODUCT = [
    "Cotton T-Shirt",
    "Running Shoes",
    "Coffee Maker",
    "Desk Lamp",
    "Backpack",
    "Water Bottle",
    "Bluetooth Speaker",
    "Yoga Mat",
    "Notebook",
    "Headphones",
    "Wall Clock",
    "Throw Blanket",
    "Phone Case",
    "Chef's Knife",
    "Travel Mug",
    "Sunglasses",
    "Office Chair",
    "Rain Jacket",
    "Scented Candle",
    "Tea Set",
]
_MEDICATIONS = [
    "Amoxicillin 500 mg",
    "Lisinopril 10 mg",
    "Metformin 850 mg",
    "Atorvastatin 20 mg",
    "Levothyroxine 50 mcg",
    "Amlodipine 5 mg",
    "Omeprazole 20 mg",
    "Sertraline 50 mg",
    "Albuterol inhaler",
    "Ibuprofen 400 mg",
    "Cetirizine 10 mg",
    "Prednisone 10 mg",
    "Losartan 50 mg",
    "Gabapentin 300 mg",
    "Azithromycin 250 mg",
]
_LAB_TESTS = [
    "Complete Blood Count",
    "Basic Metabolic Panel",
    "Lipid Panel",
    "Hemoglobin A1c",
    "Thyroid Panel",
    "Urinalysis",
    "Vitamin D",
    "Liver Function Panel",
    "Iron Studies",
    "Strep A Rapid Test",
    "COVID-19 PCR",
    "Comprehensive Metabolic Panel",
]
_PETS = [
    "Buddy",
    "Luna",
    "Max",
    "Bella",
    "Charlie",
    "Daisy",
    "Rocky",
    "Milo",
    "Coco",
    "Bailey",
    "Pepper",
    "Ziggy",
    "Biscuit",
    "Maple",
    "Oreo",
    "Shadow",
    "Nala",
    "Simba",
    "Rosie",
    "Tucker",
]
_CATEGORIES = [
    "Electronics",
    "Home & Kitchen",
    "Books",
    "Clothing",
    "Sports & Outdoors",
    "Toys & Games",
    "Beauty",
    "Garden",
    "Office Supplies",
    "Groceries",
    "Pet Supplies",
    "Automotive",
]
_MUSIC = [
    "Midnight Drive",
    "Golden Hour",
    "Paper Planes",
    "Slow Burn",
    "Northern Lights",
    "City of Glass",
    "Summer Rain",
    "Echoes",
    "Wildflower",
    "Neon Skies",
    "Long Way Home",
    "Blue Monday",
]

LABELS: dict[str, list[str]] = {
    "category": _CATEGORIES,
    "categories": _CATEGORIES,
    "type": ["standard", "premium", "basic"],
    "kind": ["standard", "premium", "basic"],
    "priority": ["low", "normal", "high", "urgent"],
    "gender": ["female", "male", "non-binary"],
    "sex": ["female", "male"],
    "department": ["Sales", "Engineering", "Finance", "Marketing", "Support", "Operations"],
    "channel": ["web", "mobile", "email", "phone", "in_store"],
    "source": ["web", "mobile", "email", "referral"],
    "method": ["card", "bank_transfer", "cash", "paypal"],
    "payment_method": ["card", "bank_transfer", "cash", "paypal"],
    "level": ["beginner", "intermediate", "advanced"],
    "tier": ["bronze", "silver", "gold", "platinum"],
    "plan": ["free", "basic", "pro", "enterprise"],
    "cabin": ["economy", "premium_economy", "business", "first"],
    "specialty": ["Family Medicine", "Cardiology", "Dermatology", "Pediatrics", "Orthopedics"],
    "language": ["en", "fr", "de", "es", "it"],
    "locale": ["en-US", "en-GB", "fr-FR", "de-DE", "es-ES"],
    "timezone": ["UTC", "Europe/London", "America/New_York", "Asia/Tokyo"],
    "time_zone": ["UTC", "Europe/London", "America/New_York", "Asia/Tokyo"],
    "color": ["red", "blue", "green", "black", "white", "gray"],
    "colour": ["red", "blue", "green", "black", "white"],
    "size": ["XS", "S", "M", "L", "XL"],
    "unit": ["each", "kg", "g", "l", "ml", "box"],
    "format": ["pdf", "docx", "csv", "png"],
    "role": ["admin", "member", "viewer", "owner"],
    "visibility": ["public", "private", "unlisted"],
    "frequency": ["daily", "weekly", "monthly", "yearly"],
    "interval": ["day", "week", "month", "year"],
    "platform": ["web", "ios", "android"],
    "device": ["desktop", "mobile", "tablet"],
    "cuisine": ["Italian", "Thai", "Mexican", "Japanese", "Indian"],
    "room_type": ["single", "double", "twin", "suite"],
    "genre": ["Pop", "Rock", "Jazz", "Hip-Hop", "Classical"],
    "tag": ["new", "sale", "popular", "limited"],
    "tags": ["new", "sale", "popular", "limited"],
    "occupation": ["Teacher", "Engineer", "Nurse", "Designer", "Accountant"],
    "position": ["Manager", "Engineer", "Analyst", "Designer", "Coordinator"],
    "industry": ["Retail", "Healthcare", "Finance", "Education", "Technology"],
    "mode": ["online", "in_person"],
    "form": ["tablet", "capsule", "liquid", "inhaler"],
    "route": ["oral", "topical", "inhaled", "intravenous"],
    "sport": ["running", "cycling", "swimming", "yoga"],
    "group": ["Team A", "Team B", "Team C"],
    "class": ["standard", "premium"],
    "model": ["Model S", "Model X", "Mark II"],
}
_GENERIC_LABELS = ["standard", "premium", "basic", "other"]


def titles_for(entity: str, field: str) -> list[str]:
    """Believable titles for ``entity.field`` (a product, an event, a medication ...)."""
    words = set(entity.split("_")) | set(field.split("_"))
    if words & {"medication", "drug", "prescription", "medicine"}:
        return _MEDICATIONS
    if words & {"lab", "panel"} or (
        "test" in words and not words & {"clock", "mode", "run", "case", "suite"}
    ):
        return _LAB_TESTS  # a lab test, not Stripe's test clock or a test run
    if words & {"pet", "dog", "cat", "animal"}:
        return _PETS
    if words & {"product", "item", "sku", "variant", "listing", "catalog", "merchandise", "article", "line"}:
        return [f"{a} {p}" for a in _ADJ for p in _PRODUCT]
    if words & {"course", "lesson", "module", "subject", "curriculum", "classroom"}:
        return COURSE_TITLES
    if words & {"calendar"}:
        return CALENDAR_TITLES
    if words & {"event", "meeting", "appointment", "session", "booking", "schedule", "entry", "class"}:
        return EVENT_TITLES
    if words & {
        "task",
        "todo",
        "issue",
        "story",
        "card",
        "ticket",
        "epic",
        "project",
        "milestone",
        "todolist",
    }:
        return TASK_TITLES
    if words & {"file", "document", "attachment", "folder", "doc"}:
        return DOC_TITLES
    if words & {"device", "vehicle", "tracker", "car", "truck", "fleet", "asset"}:
        return VEHICLE_TITLES
    if words & {"geofence", "site", "warehouse", "depot", "branch", "venue", "store", "location", "place"}:
        return PLACE_TITLES
    if words & {"room"}:
        return [
            "Standard Double Room",
            "Deluxe King Room",
            "Twin Room",
            "Junior Suite",
            "Family Room",
            "Single Room",
        ]
    if words & {"rate", "fare", "tariff"}:
        return [
            "Flexible rate",
            "Non-refundable saver",
            "Bed and breakfast",
            "Member rate",
            "Advance purchase",
        ]
    if words & {"category", "collection", "department", "section"}:
        return _CATEGORIES
    if words & {"track", "song", "album", "playlist", "episode", "show", "podcast", "artist"}:
        return _MUSIC
    return GENERIC_TITLES


def labels_for(field: str) -> list[str]:
    """Believable short labels for a label-like field, by its name (generic tiers otherwise)."""
    n = field.lower()
    if n in LABELS:
        return LABELS[n]
    last = n.rsplit("_", 1)[-1]
    return LABELS.get(last, _GENERIC_LABELS)
