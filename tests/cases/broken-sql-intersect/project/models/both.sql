SELECT order_id FROM source('web_orders')
INTERSECT
SELECT order_id FROM source('app_orders')
