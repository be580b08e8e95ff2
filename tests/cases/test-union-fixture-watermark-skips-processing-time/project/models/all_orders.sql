-- A union of an event-time source and one on processing time keeps no time attribute.
SELECT order_id, amount FROM source('web_orders')
UNION ALL
SELECT order_id, amount FROM source('app_orders')
