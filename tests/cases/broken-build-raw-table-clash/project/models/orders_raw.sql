SELECT customer_id FROM source('orders')
