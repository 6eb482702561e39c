"""A small labelled retrieval corpus: 40 short documents about made-up products, places and
procedures (eight themes of five, so each has near neighbours), and 64 questions, each with the
id of the one document that answers it.

The questions are of three kinds, marked so results can be broken down:

- ``paraphrase``: asked in other words than the answer's (vectors should do better);
- ``identifier``: naming a code, version, model number or proper name (keywords should);
- ``plain``: ordinary questions that share some words with the answer.

All text is original, written for this benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["DOCUMENTS", "QUESTIONS", "Question"]

Kind = Literal["paraphrase", "identifier", "plain"]


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    answer: str  # a key of DOCUMENTS
    kind: Kind


DOCUMENTS: dict[str, str] = {
    # --- Brisa home appliances --------------------------------------------------------------
    "brisa-kettle-descale": """\
Descaling the Brisa KX-220 kettle

Hard water leaves a white mineral crust on the heating plate. Every four to six weeks, fill the \
KX-220 halfway with one part white vinegar to two parts water, bring it to the boil and leave it \
to stand for an hour. Pour the mixture away, rinse three times with clean water and boil a full \
kettle of fresh water once before use. Citric acid sachets work too: one sachet per litre. Never \
use abrasive pads on the plate, they scratch the coating.""",
    "brisa-kettle-warranty": """\
Brisa kettle warranty and error codes

Every Brisa kettle carries a 24-month warranty from the date of purchase. Register the \
appliance with the serial number printed under the base to extend it by a further 12 months. \
The warranty does not cover damage caused by limescale. If the indicator flashes E-4471, the \
kettle was switched on empty and the dry-boil cut-out tripped: let it cool for ten minutes, \
then refill it. Code E-4480 means the lid sensor is faulty and the kettle must be returned.""",
    "brisa-toaster": """\
Using the Brisa BT-9 toaster

The BT-9 has two wide slots and a browning dial with seven settings; 1 is barely warm and 7 is \
dark. Use the bagel button to heat only the inner faces of a split bagel, and the frozen \
button to add about forty seconds for bread straight from the freezer. Slide out the crumb tray \
at the back once a week and shake it over the bin, otherwise the crumbs can smoke. Unplug the \
toaster before you clear a stuck slice, and never use a metal knife.""",
    "brisa-blender": """\
Brisa PowerJug blender safety

The PowerJug motor only starts when the jug is seated and the lid is locked; this interlock \
cannot be bypassed. After long runs with thick mixtures the thermal protection may stop the \
motor. It resets by itself once the base has cooled, usually within twenty minutes. Do not \
blend liquids hotter than 60 degrees: steam pressure can push the lid off. The blades are \
sharp; remove them with the supplied tool, not with your fingers.""",
    "brisa-grinder": """\
Brisa G-31 burr grinder

The G-31 grinds coffee between two conical burrs. Turn the collar clockwise for a finer \
grind, for espresso, and anticlockwise for a coarser grind, for cafetiere or cold brew; there \
are 40 clicks between the extremes. Clean the burrs monthly with grinder cleaning tablets and \
brush out the chute. Never run the grinder empty for more than a few seconds, and do not grind \
spices in it: the oils stay in the burrs and flavour your coffee for weeks.""",
    "brisa-kettle-kx310": """\
The Brisa KX-310 kettle

The KX-310 is the large 1.7 litre Brisa kettle with temperature control. Choose 70, 80, 90 or \
100 degrees with the buttons on the handle; the keep-warm function holds the water at the chosen \
temperature for 30 minutes. Because the KX-310 has a concealed element, descale it only with \
citric acid, never vinegar, every eight weeks. If the display shows E-5102, the temperature \
probe has failed and the kettle must go back to the shop; E-5105 means it was lifted off the \
base while heating.""",
    "brisa-coffee-cm5": """\
Brisa CM-5 coffee machine messages

The CM-5 espresso machine reports problems on its small display. E-21 means the water tank is \
empty or not pushed fully home. E-22 means the drip tray is full. E-35 appears when the brewing \
unit is missing or not locked; open the side door and push the unit in until it clicks. E-40 \
means descaling is overdue and the machine will refuse to brew after another 50 cups. For any \
other message, switch the machine off for a minute.""",
    # --- Velmora and Ostrand -----------------------------------------------------------------
    "velmora-ferry": """\
Getting to Velmora

Velmora is reached only by sea. The ferry leaves Port Alder three times a day, at 07:10, 12:40 \
and 18:05, and the crossing takes about 95 minutes. Foot passengers can buy tickets on board; \
cars must be booked at least two days ahead as the deck holds only 30 vehicles. Sailings are \
cancelled when the wind exceeds force 7, which happens most often in November. The harbour \
office posts cancellations on the board by the slipway by 6 am.""",
    "velmora-lighthouse": """\
Skerrin Lighthouse

The Skerrin lighthouse on the northern tip of Velmora was built in 1871 and still guides ships \
past the Hound Rocks. Guided tours climb the 212 steps to the lamp room every hour from 10:00 \
to 16:00. Tours are closed throughout February for maintenance of the lens. Children under \
eight must be carried or held by the hand on the spiral stair, and the gallery is closed when \
the wind is strong.""",
    "ostrand-market": """\
Ostrand Saturday market

Every Saturday from 8 until 1 the square in Ostrand fills with about sixty stalls. Farmers from \
the valley sell cheeses, honey and early vegetables; stall 14, by the fountain, is known for \
its smoked eel. Most traders accept cash only, and the nearest cash machine is inside the post \
office, which closes at noon. Parking on the square is forbidden on market days; use the car \
park behind the church.""",
    "ostrand-museum": """\
Museum of Salt and Tide

The Museum of Salt and Tide in Ostrand tells the story of the salt pans and the kelp harvest \
that once employed half the town. Admission is 6 euros for adults and free for everyone on the \
first Sunday of each month. The ground floor is step-free; the upper gallery with the model \
boats is reached by stairs only. Photography without flash is allowed. The cafe serves local \
oysters from May to August.""",
    "velmora-hiking": """\
The Greyback Ridge trail

The Greyback Ridge trail on Velmora is an 11 km loop from the village of Cray, marked by posts \
with an orange band. Allow four hours; the climb to the summit cairn is steep and loose in \
places. There is no water on the ridge and mobile phone coverage is poor beyond the first \
kilometre, so tell someone your route. In fog, turn back at the old sheepfold rather than \
follow the cliff edge.""",
    # --- Tallis & Roe people procedures --------------------------------------------------
    "hr-expenses": """\
Claiming expenses at Tallis & Roe

Submit expense claims on form HR-17B within 30 days of the spending. Attach an itemised \
receipt for anything above 25 euros; card statements alone are not accepted. Claims are \
approved by your line manager and paid with the next monthly salary. Alcohol, fines and \
upgrades to first class are never reimbursed. For claims above 2,000 euros the finance \
director must also sign.""",
    "hr-parental-leave": """\
Parental leave

Employees of Tallis & Roe are entitled to 20 weeks of fully paid parental leave, whatever \
their gender, taken within the first year after the birth or adoption. Tell HR at least eight \
weeks before the leave starts. The leave can be split into up to three blocks. Your role is \
kept open, and you can ask for up to ten keeping-in-touch days, paid at the normal rate, \
without ending the leave.""",
    "hr-badges": """\
Building badges

Your badge opens the doors of every floor you need. If it is lost or stolen, report it at \
once to the security desk in room B214 so it can be blocked. Security issues a temporary \
badge that works for 48 hours; a permanent replacement is printed within two working days and \
costs 15 euros after the first loss. Never lend your badge, and do not hold the door open for \
people you do not recognise.""",
    "hr-remote-work": """\
Working from home

Staff may work from home for up to three days a week, agreed with their team. A one-off \
allowance of 300 euros helps buy a desk chair or monitor. You must be reachable during core \
hours, 10:00 to 15:00, and use the company laptop with its disk encryption switched on. Working \
from abroad for more than ten days a year needs approval from HR because of tax rules.""",
    "hr-travel-booking": """\
Booking business travel

All business trips are booked through the Wayfinder travel portal, which applies the travel \
policy automatically. Flights under six hours are economy class; longer flights may be premium \
economy. Hotels are capped at 180 euros a night, 250 in London and Paris. Trains are \
preferred to flights for journeys under four hours. Bookings made outside Wayfinder are not \
covered by the company travel insurance.""",
    # --- Tallis & Roe IT -----------------------------------------------------------------
    "it-vpn": """\
Connecting to the VPN

Install the NetBridge client from the software centre and connect to the gateway \
vpn2.tallisroe.example with your usual login and a code from the authenticator app. If \
NetBridge shows error 809, your network is blocking the connection: hotel and cafe Wi-Fi often \
block UDP ports 500 and 4500. Switch to a phone hotspot or ask the venue. The VPN disconnects \
after 12 hours and you have to sign in again.""",
    "it-password": """\
Passwords

Passwords must be at least 14 characters long and expire every 90 days. You will be warned by \
email a week before. If you forget yours, use the self-service reset page from any device \
after confirming your identity with the authenticator app. After five wrong attempts the \
account locks for 30 minutes. Never reuse a password from a private account, and never tell it \
to anyone, including the service desk.""",
    "it-printing": """\
Printing

Printing uses follow-me queues: send your document to the single queue called FollowMe and \
collect it at any printer in any office by tapping your badge on the reader. Jobs that are not \
released within 12 hours are deleted. Printing defaults to double-sided black and white; colour \
has to be chosen each time. Report paper jams by pressing the help button on the printer \
screen.""",
    "it-laptops": """\
Laptop replacement

Laptops are replaced every four years. When yours is due, the service desk contacts you; to \
ask for an early replacement because of a fault, open a ticket in the category HW-REFRESH and \
describe the problem. Back up local files to your home drive before the swap, since the old \
disk is wiped the same day. Accessories such as docks and headsets are ordered separately.""",
    "it-phishing": """\
Suspicious email

If a message asks you to log in, pay an invoice or open an attachment you did not expect, do \
not click anything. Use the Report button in the mail client: it sends the message to the \
security operations team, SOC-7, and removes it from your inbox. Do not forward suspicious \
messages to colleagues. If you already entered your password on a strange page, change it \
immediately and call the service desk.""",
    "hr-forms": """\
Which form for what

Most people procedures at Tallis & Roe start with a form from the intranet. HR-17A is for \
mileage when you use your own car for work, at 0.30 euros per kilometre. HR-17B is for all other \
expenses. HR-21 records overtime and must be signed by your manager within the same month. \
HR-30 reports sickness absence of more than three days and needs a doctor's note. HR-44 asks \
for a change of working hours.""",
    # --- Halden laboratory safety --------------------------------------------------------
    "lab-spill": """\
Acid spills

For a small acid spill, under half a litre, put on gloves and goggles, cover the spill with \
sodium bicarbonate from the spill kit until the fizzing stops, then sweep it up and put it in \
the solid waste bin. The spill kit for the Halden teaching labs is kept under the sink in lab \
3. For larger spills, leave the room, close the door and call the safety officer on extension \
4400.""",
    "lab-fume-hood": """\
Fume cupboards

Work with volatile or toxic substances only inside a fume cupboard. Keep the sash at or below \
the 45 cm mark while working and close it fully when you leave. If the airflow alarm sounds, \
stop work, close containers and lower the sash completely. Every fume cupboard is tested once \
a year; do not use one whose test sticker has expired. Do not store bottles in the cupboard, \
they disturb the airflow.""",
    "lab-cryogenics": """\
Liquid nitrogen

Liquid nitrogen boils at minus 196 degrees and can cause severe cold burns. Wear cryogenic \
gloves and a full face shield when filling dewars. Nitrogen gas displaces oxygen, so never fill \
containers in a small closed room. Dewars must travel in the lift on their own: send the lift \
with the dewar and walk up the stairs, because a stuck lift with a person and a leaking dewar \
can be fatal.""",
    "lab-waste": """\
Chemical waste

Collect chemical waste in the labelled containers in each lab. Keep halogenated solvents, such \
as dichloromethane and chloroform, apart from non-halogenated solvents: they are disposed of by \
different contractors and mixing them costs five times more. Label every container with its \
contents and the date it was started. Full containers are collected from the corridor store on \
Thursday mornings.""",
    "lab-eyewash": """\
Eyewash stations

If a chemical splashes into an eye, go straight to the nearest eyewash station and rinse for \
at least 15 minutes, holding the eyelids open. Remove contact lenses if you can do so quickly. \
Then seek medical help and take the safety data sheet with you. Eyewash stations are run for a \
minute every week by the lab technician to flush stale water, and the date is written on the \
tag.""",
    # --- Marrow Fields allotments --------------------------------------------------------
    "garden-plots": """\
Allotment plots at Marrow Fields

Plots at Marrow Fields are given out each January by lottery among the people on the waiting \
list. A full plot is 250 square metres and costs 40 euros a year; half plots cost 25. A plot \
left uncultivated for a whole season may be reassigned after a warning letter. Tenants must \
not put up permanent buildings; a shed of up to 6 square metres is allowed with the committee's \
consent.""",
    "garden-compost": """\
Composting

The shared compost bays are at the north gate. Vegetable scraps, grass cuttings and shredded \
cardboard are welcome; meat, dairy, cooked food and diseased plants are not, as they attract \
rats or spread disease. Turn the active bay every two weeks with the forks provided. Finished \
compost from the third bay is free for members, up to two barrows each per month.""",
    "garden-watering": """\
Watering

From July to August hoses and sprinklers are banned at Marrow Fields because the site shares \
one mains connection. Use watering cans, and fill them from the rain tanks first. Water in the \
early morning or evening, at the roots rather than on the leaves. Mulching beds with straw or \
compost keeps the soil moist for longer and reduces the need to water at all.""",
    "garden-blight": """\
Tomato and potato blight

Blight shows as brown patches on leaves and stems that spread quickly in warm, wet weather. \
Remove affected leaves at once, and if the stems are infected pull up the whole plant. Do not \
put blighted plants on the compost heap; bag them and take them home for the general waste. \
Choose resistant varieties, leave space between plants for air, and water the soil, not the \
foliage.""",
    "garden-shed": """\
The tool shed

The shared tool shed next to the car park holds wheelbarrows, a rotavator, strimmers and hand \
tools. It is locked with a combination padlock whose code changes on the first of every month; \
the new code is pinned on the noticeboard inside the members' hut. Book the rotavator on the \
sheet by the door and clean every tool before returning it. Report breakages to the \
committee.""",
    # --- Quillstack software -------------------------------------------------------------
    "quill-3-8-2": """\
Quillstack 3.8.2 release notes

This maintenance release fixes the crash when exporting large documents to PDF (ticket \
QX-2290) and a memory leak in the spell checker. A dark theme is now available under View, \
Appearance. Table borders are preserved when pasting from spreadsheets. Users of 3.8.0 and \
3.8.1 are updated automatically; no data migration is needed.""",
    "quill-3-9-0": """\
Quillstack 3.9.0 release notes

Version 3.9.0 introduces the second plugin API: plugins written for the first API keep \
working until 4.0 but show a warning. Legacy folder sync has been removed; use cloud \
workspaces instead. Quillstack now requires macOS 12 or Windows 10 or later. Real-time \
co-editing supports up to 25 people in one document.""",
    "quill-errors": """\
Quillstack error messages

QS-101 means the licence has expired; ask your administrator to renew it. QS-207 is a sync \
conflict: two people changed the same paragraph offline, and Quillstack keeps both versions \
side by side for you to choose. QS-318 means the workspace storage quota is full; delete old \
revisions or ask for more space. Any other code should be reported with the log file from the \
Help menu.""",
    "quill-install": """\
Installing Quillstack

Download the offline installer from the customer portal and verify its SHA-256 checksum \
against the one published on the download page. For unattended installation on many machines, \
run the installer with the /quiet flag and pass the licence key with /key=. The installer \
needs about 900 MB of free disk space and administrator rights.""",
    "quill-licensing": """\
Quillstack licences

Quillstack is licensed per seat or with floating licences. Floating licences are served by the \
licence server, which listens on TCP port 27015; clients borrow a licence when they start and \
return it when they quit. A licence can be checked out for offline use for up to 14 days. \
Seats can be moved between people once a month from the admin console.""",
    "quill-3-7-0": """\
Quillstack 3.7.0 release notes

Quillstack 3.7.0 adds comments on selected text and a new outline panel. The minimum system \
requirements are now macOS 11 or Windows 10 with 8 GB of memory. Documents open about 40 percent \
faster thanks to a rewritten layout engine. Known issue: exporting documents with more than 500 \
pages to PDF can crash; a fix is planned.""",
    "quill-3-7-4": """\
Quillstack 3.7.4 release notes

This update fixes the duplicated footnotes after undo (ticket QX-1877) and the wrong page \
numbers in tables of contents. Images pasted from the browser now keep their original \
resolution. The update is recommended for all users of the 3.7 series and installs without a \
restart.""",
    "quill-3-8-0": """\
Quillstack 3.8.0 release notes

Version 3.8.0 brings templates shared across a workspace, a word count goal for each document \
and keyboard shortcuts that can be changed in Settings. The spell checker now supports Danish \
and Finnish. Sync between devices uses less battery on laptops. Administrators can now enforce \
two-factor sign-in for a whole workspace.""",
    # --- Lowmere Regional Rail -----------------------------------------------------------
    "rail-44x": """\
The 44X express

The 44X is the fast service between Lowmere Central and Harrowgate. It stops only at Dunmore \
and takes 52 minutes, against 80 minutes for the stopping service. The 44X runs every half \
hour on weekdays and hourly at weekends. First class is in the front carriage. The last 44X \
from Harrowgate leaves at 23:15.""",
    "rail-tickets": """\
Tickets and railcards

Off-peak tickets are valid on trains leaving after 09:30 on weekdays and all day at weekends. \
Anytime tickets cost about twice as much. A Lowmere Railcard costs 30 euros a year and takes a \
third off off-peak fares for the holder and one companion. Buy tickets before boarding: \
passengers without a ticket pay the full anytime fare plus a penalty of 20 euros.""",
    "rail-bikes": """\
Bicycles on trains

Full-size bicycles may be carried free on local trains outside the weekday rush hours, 07:00 \
to 09:30 and 16:30 to 18:30, space permitting. Folding bikes, folded, are allowed at any time. \
On long-distance trains to the coast a bike space must be reserved in advance. Electric \
scooters are not allowed on any train.""",
    "rail-delays": """\
Compensation for delays

If your train arrives at your destination 15 to 29 minutes late, you can claim back 25 percent \
of the single fare; 30 to 59 minutes late, 50 percent; an hour or more, the full fare. Claim \
online within 28 days with a photo of your ticket. Season ticket holders are compensated \
according to the days they travelled. Payments are made to the original card.""",
    "rail-lost-property": """\
Lost property

Items found on trains and at stations are taken to the lost property office at Lowmere \
Central, open on weekdays from 9:00 to 17:00. Describe the item and when you lost it on the \
online form. Items are kept for three months and then given to charity. Collecting an item \
costs 5 euros, or nothing for wallets and identity documents.""",
    "rail-47": """\
The 47 stopping service

The 47 calls at every station between Lowmere Central and Harrowgate: Ashby Road, Dunmore, \
Kelsey Bridge, Morrow and Tilling. The journey takes 80 minutes. Trains run hourly from 06:00 \
to midnight, seven days a week, and every half hour on weekday mornings until 09:00. All \
stations on the line are step-free except Kelsey Bridge, which has stairs to both platforms.""",
    "rail-12a": """\
The 12A coast line

The 12A runs from Lowmere Central to the seaside town of Penhallow, along the estuary. Trains \
leave every two hours, and on Sundays only from May to September. The line is single track \
beyond Fenwick, so a late train in one direction delays the next one in the other. Penhallow \
station is a ten minute walk from the beach; in summer extra carriages are added on \
Saturdays.""",
}

QUESTIONS: list[Question] = [
    # Brisa
    Question(
        "How do I get rid of the chalky layer inside my water boiler?",
        "brisa-kettle-descale",
        "paraphrase",
    ),
    Question("KX-220 vinegar ratio", "brisa-kettle-descale", "identifier"),
    Question("What does E-4471 mean on my kettle?", "brisa-kettle-warranty", "identifier"),
    Question(
        "For how long is the kettle guaranteed if I sign it up online?",
        "brisa-kettle-warranty",
        "paraphrase",
    ),
    Question(
        "My toast keeps coming out too pale, which setting makes it darker?",
        "brisa-toaster",
        "plain",
    ),
    Question("BT-9 crumb tray", "brisa-toaster", "identifier"),
    Question(
        "The mixer stopped mid-smoothie and won't spin, what happened?",
        "brisa-blender",
        "paraphrase",
    ),
    Question("Can I blend hot soup?", "brisa-blender", "plain"),
    Question("How do I set the G-31 for espresso?", "brisa-grinder", "identifier"),
    Question("What does E-5102 mean on the kettle?", "brisa-kettle-kx310", "identifier"),
    Question("How do I keep the water hot after it boils?", "brisa-kettle-kx310", "paraphrase"),
    Question("CM-5 shows E-21", "brisa-coffee-cm5", "identifier"),
    Question("My espresso maker says the tray needs emptying", "brisa-coffee-cm5", "paraphrase"),
    Question(
        "Is it fine to mill pepper in my coffee machine's grinder?", "brisa-grinder", "paraphrase"
    ),
    # Velmora and Ostrand
    Question("What time does the first boat to the island depart?", "velmora-ferry", "paraphrase"),
    Question("Do I need to book a car on the Port Alder ferry?", "velmora-ferry", "identifier"),
    Question(
        "How many steps does the Skerrin lighthouse have?", "velmora-lighthouse", "identifier"
    ),
    Question(
        "Which month can't visitors go up the tower on the northern tip?",
        "velmora-lighthouse",
        "paraphrase",
    ),
    Question("Where can I buy smoked eel in Ostrand?", "ostrand-market", "plain"),
    Question("Can I pay by card at the weekend farmers' stalls?", "ostrand-market", "paraphrase"),
    Question("When is entry to the Museum of Salt and Tide free?", "ostrand-museum", "identifier"),
    Question(
        "Is the exhibition about seaweed gathering accessible for wheelchair users?",
        "ostrand-museum",
        "paraphrase",
    ),
    Question("How long is the Greyback Ridge loop?", "velmora-hiking", "identifier"),
    Question(
        "What should walkers do if mist comes down on the hill path?",
        "velmora-hiking",
        "paraphrase",
    ),
    # People procedures
    Question(
        "Which form do I use for HR-17B claims and what is the deadline?",
        "hr-expenses",
        "identifier",
    ),
    Question(
        "Will the company pay me back for a speeding ticket I got on a work trip?",
        "hr-expenses",
        "paraphrase",
    ),
    Question("How many weeks of parental leave are paid?", "hr-parental-leave", "plain"),
    Question(
        "I'm adopting a child, how far in advance must I inform human resources?",
        "hr-parental-leave",
        "paraphrase",
    ),
    Question("Where is room B214?", "hr-badges", "identifier"),
    Question("What is form HR-21 for?", "hr-forms", "identifier"),
    Question(
        "How much do I get per kilometre when I drive my own car for work?", "hr-forms", "plain"
    ),
    Question("I lost my access card, what do I do?", "hr-badges", "paraphrase"),
    Question("How many days a week can I work from home?", "hr-remote-work", "plain"),
    Question("Is there money to buy a monitor for my home office?", "hr-remote-work", "plain"),
    Question("What is the hotel limit in Wayfinder?", "hr-travel-booking", "identifier"),
    Question(
        "Can I fly business class to a conference five hours away?",
        "hr-travel-booking",
        "paraphrase",
    ),
    # IT
    Question("NetBridge error 809", "it-vpn", "identifier"),
    Question("I can't get onto the company network from my hotel room", "it-vpn", "paraphrase"),
    Question("How often do I need to change my login secret?", "it-password", "paraphrase"),
    Question("How long must a password be?", "it-password", "plain"),
    Question("Where do I pick up the pages I sent to FollowMe?", "it-printing", "identifier"),
    Question("My print job vanished overnight", "it-printing", "paraphrase"),
    Question("HW-REFRESH ticket", "it-laptops", "identifier"),
    Question(
        "My notebook computer is old and broken, how do I get a new one?",
        "it-laptops",
        "paraphrase",
    ),
    Question("Who is SOC-7?", "it-phishing", "identifier"),
    Question(
        "I got a weird message asking me to settle a bill, what should I do?",
        "it-phishing",
        "paraphrase",
    ),
    # Lab safety
    Question("Where is the spill kit in the Halden labs?", "lab-spill", "identifier"),
    Question(
        "Someone knocked over a beaker of hydrochloric acid, how do we clean it up?",
        "lab-spill",
        "paraphrase",
    ),
    Question("How high may the sash be open while working?", "lab-fume-hood", "plain"),
    Question("Can I take a dewar in the lift with me?", "lab-cryogenics", "plain"),
    Question(
        "What protective equipment do I need to handle cryogenic liquids?",
        "lab-cryogenics",
        "plain",
    ),
    Question("Can dichloromethane go in the same container as acetone?", "lab-waste", "identifier"),
    Question("What day are the used solvent containers taken away?", "lab-waste", "paraphrase"),
    Question(
        "A colleague got a chemical in her eye, how long should she rinse?", "lab-eyewash", "plain"
    ),
    # Marrow Fields
    Question("How are Marrow Fields plots allocated?", "garden-plots", "identifier"),
    Question("How much does it cost to rent half a plot?", "garden-plots", "plain"),
    Question("Can I throw leftover chicken into the shared heap?", "garden-compost", "paraphrase"),
    Question("Are sprinklers allowed in summer?", "garden-watering", "plain"),
    Question(
        "My tomato leaves have brown spots spreading fast, what do I do?", "garden-blight", "plain"
    ),
    Question("What's the combination for the padlock?", "garden-shed", "plain"),
    # Quillstack
    Question("Which release fixed QX-2290?", "quill-3-8-2", "identifier"),
    Question("Is there a night mode in the editor now?", "quill-3-8-2", "paraphrase"),
    Question("What does QS-207 mean?", "quill-errors", "identifier"),
    Question("Which version fixed QX-1877?", "quill-3-7-4", "identifier"),
    Question("What is new in Quillstack 3.8.0?", "quill-3-8-0", "identifier"),
    Question("Quillstack 3.7.0 system requirements", "quill-3-7-0", "identifier"),
    Question(
        "Can admins force everyone to use a second sign-in factor?", "quill-3-8-0", "paraphrase"
    ),
    Question(
        "How do I deploy the program silently across lots of computers?",
        "quill-install",
        "paraphrase",
    ),
    Question("Which port does the licence server use?", "quill-licensing", "plain"),
    # Lowmere Regional Rail
    Question("Which stations does the 44X stop at?", "rail-44x", "identifier"),
    Question("How long does the 47 take to Harrowgate?", "rail-47", "identifier"),
    Question("Is there step-free access at Kelsey Bridge?", "rail-47", "identifier"),
    Question("Does the 12A run on Sundays?", "rail-12a", "identifier"),
    Question("Why is the train to the beach often late?", "rail-12a", "paraphrase"),
    Question("How much does a Lowmere Railcard save?", "rail-tickets", "identifier"),
    Question("Can I bring my bicycle on the 8 am train?", "rail-bikes", "plain"),
    Question("My train was 40 minutes late, how much do I get back?", "rail-delays", "plain"),
    Question(
        "I left my umbrella on a train, where can I collect it?", "rail-lost-property", "paraphrase"
    ),
]
